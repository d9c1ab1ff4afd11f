package boltstore

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/suppress"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// The campaign buckets. Every write that the DynamoDB adapters make
// conditional (campaigntable, limitsdynamo, ses) is
// one bolt transaction here that checks the same condition and fails
// with the same error; none is more lenient.
var (
	bucketCampaigns           = []byte("campaigns")            // id -> campaign.Campaign
	bucketCampaignOwners      = []byte("campaign-owners")      // owner NUL created NUL id -> mark (the owner index)
	bucketCampaignTasks       = []byte("campaign-tasks")       // campaign NUL task -> campaign.SendTask
	bucketCampaignOpen        = []byte("campaign-open")        // campaign NUL task -> mark, while Pending or Running
	bucketCampaignDone        = []byte("campaign-done")        // campaign -> its terminal tasks, decimal
	bucketCampaignCheckpoints = []byte("campaign-checkpoints") // campaign -> provision.Checkpoint
	bucketCampaignTimer       = []byte("campaign-timer")       // name NUL at -> timer.Schedule (the dev campaign timer's)
	bucketCampaignReceipts    = []byte("campaign-receipts")    // idempotency key -> outbox sequence
	bucketSenderLimits        = []byte("sender-limits")        // sender NUL day -> dayCounts
	bucketSuppressions        = []byte("suppressions")         // normalized address -> suppress.Entry (one list)
	mark                      = []byte{1}
)

// ErrCampaignExists: a campaign of that id exists already (as
// campaigntable.ErrCampaignExists).
var ErrCampaignExists = errors.New("campaign exists")

// keyTime is a time as a key part that sorts as the instant does.
func keyTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

func campaignTaskKey(k campaign.Key) []byte { return []byte(k.CampaignID + "\x00" + k.TaskID) }

// CampaignStore keeps campaigns and their send tasks: campaign.Tasks,
// campaign.Campaigns and what the campaign API reads and writes
// (campaignapi.Store).
type CampaignStore struct{ db *bolt.DB }

var (
	_ campaign.Tasks     = (*CampaignStore)(nil)
	_ campaign.Campaigns = (*CampaignStore)(nil)
)

// CampaignStore is the store's campaigns and send tasks.
func (d *DB) CampaignStore() *CampaignStore { return &CampaignStore{db: d.db} }

// Create writes a new campaign and its tasks in one transaction;
// ErrCampaignExists when the id is taken.
func (s *CampaignStore) Create(_ context.Context, c campaign.Campaign, tasks []campaign.SendTask) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		cb := tx.Bucket(bucketCampaigns)
		if cb.Get([]byte(c.ID)) != nil {
			return ErrCampaignExists
		}
		if err := putJSON(cb, []byte(c.ID), c); err != nil {
			return err
		}
		if err := tx.Bucket(bucketCampaignOwners).Put([]byte(c.OwnerID+"\x00"+keyTime(c.CreatedAt)+"\x00"+c.ID), mark); err != nil {
			return err
		}
		for _, t := range tasks {
			if err := putTask(tx, nil, t); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("boltstore: create campaign %s: %w", c.ID, err)
	}
	return nil
}

// putTask writes next over prev (nil: none stored): the task, its place
// in the open index, and, when it becomes terminal, its campaign's done
// count and the campaign's completion (the rule
// campaigntable.CampaignStore's settle keeps, here in the same
// transaction).
func putTask(tx *bolt.Tx, prev *campaign.SendTask, next campaign.SendTask) error {
	k := campaignTaskKey(next.Key())
	if err := putJSON(tx.Bucket(bucketCampaignTasks), k, next); err != nil {
		return err
	}
	open := tx.Bucket(bucketCampaignOpen)
	if next.State.Terminal() {
		if err := open.Delete(k); err != nil {
			return err
		}
	} else if err := open.Put(k, mark); err != nil {
		return err
	}
	if !next.State.Terminal() || (prev != nil && prev.State.Terminal()) {
		return nil
	}
	db := tx.Bucket(bucketCampaignDone)
	done, _ := strconv.Atoi(string(db.Get([]byte(next.CampaignID))))
	done++
	if err := db.Put([]byte(next.CampaignID), []byte(strconv.Itoa(done))); err != nil {
		return err
	}
	cb := tx.Bucket(bucketCampaigns)
	var c campaign.Campaign
	found, err := getJSON(cb, []byte(next.CampaignID), &c)
	if err != nil || !found || c.Total > done || (c.Status != campaign.Provisioning && c.Status != campaign.Active) {
		return err
	}
	c.Status, c.UpdatedAt = campaign.Completed, next.UpdatedAt.UTC()
	return putJSON(cb, []byte(c.ID), c)
}

// Get implements campaign.Tasks.
func (s *CampaignStore) Get(_ context.Context, k campaign.Key) (campaign.SendTask, error) {
	var t campaign.SendTask
	var found bool
	err := s.db.View(func(tx *bolt.Tx) (err error) {
		found, err = getJSON(tx.Bucket(bucketCampaignTasks), campaignTaskKey(k), &t)
		return err
	})
	if err != nil {
		return campaign.SendTask{}, fmt.Errorf("boltstore: get task %s: %w", k.TaskID, err)
	}
	if !found {
		return campaign.SendTask{}, fmt.Errorf("task %s: %w", k.TaskID, campaign.ErrNotFound)
	}
	return t, nil
}

// Claim implements campaign.Tasks with the campaign.Claim rule (the
// contract's claim: Pending at the send time due), ErrConditionFailed
// otherwise (missing included).
func (s *CampaignStore) Claim(_ context.Context, k campaign.Key, due, now time.Time, lease time.Duration) (campaign.SendTask, error) {
	return s.move(k, "claim", func(t campaign.SendTask) (campaign.SendTask, error) {
		return campaign.Claim(t, due, now.UTC(), lease)
	})
}

// TakeOver implements campaign.Tasks with the campaign.TakeOver rule (the
// contract's take-over of a claim past its lease).
func (s *CampaignStore) TakeOver(_ context.Context, k campaign.Key, due, now time.Time, lease time.Duration) (campaign.SendTask, error) {
	return s.move(k, "take over", func(t campaign.SendTask) (campaign.SendTask, error) {
		return campaign.TakeOver(t, due, now.UTC(), lease)
	})
}

// move applies a rule to the stored task in one transaction, the way a
// conditional write does.
func (s *CampaignStore) move(k campaign.Key, what string, rule func(campaign.SendTask) (campaign.SendTask, error)) (campaign.SendTask, error) {
	var out campaign.SendTask
	err := s.db.Update(func(tx *bolt.Tx) error {
		var t campaign.SendTask
		found, err := getJSON(tx.Bucket(bucketCampaignTasks), campaignTaskKey(k), &t)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("missing: %w", campaign.ErrConditionFailed)
		}
		next, err := rule(t)
		if err != nil {
			return fmt.Errorf("%w: %w", campaign.ErrConditionFailed, err)
		}
		out = next
		return putTask(tx, &t, next)
	})
	if err != nil {
		return campaign.SendTask{}, fmt.Errorf("boltstore: %s task %s: %w", what, k.TaskID, err)
	}
	return out, nil
}

// Replace implements campaign.Tasks: next is written only if the stored
// task still has prev's state and attempt.
func (s *CampaignStore) Replace(_ context.Context, prev, next campaign.SendTask) error {
	if prev.Key() != next.Key() {
		return fmt.Errorf("boltstore: replace task %s with %s: the keys differ", prev.ID, next.ID)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		var cur campaign.SendTask
		found, err := getJSON(tx.Bucket(bucketCampaignTasks), campaignTaskKey(prev.Key()), &cur)
		if err != nil {
			return err
		}
		if !found || cur.State != prev.State || cur.Attempt != prev.Attempt {
			return campaign.ErrConditionFailed
		}
		return putTask(tx, &cur, next)
	})
	if err != nil {
		return fmt.Errorf("boltstore: replace task %s: %w", prev.ID, err)
	}
	return nil
}

// List implements campaign.Tasks: the campaign's tasks from index from
// on, in index order (task ids sort by index).
func (s *CampaignStore) List(_ context.Context, campaignID string, from, limit int) ([]campaign.SendTask, error) {
	if from < 0 || limit < 1 {
		return nil, fmt.Errorf("boltstore: list tasks of %s: from %d, limit %d: want from >= 0 and limit >= 1", campaignID, from, limit)
	}
	prefix := []byte(campaignID + "\x00")
	var out []campaign.SendTask
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketCampaignTasks).Cursor()
		for k, v := c.Seek(campaignTaskKey(campaign.Key{CampaignID: campaignID, TaskID: campaign.TaskID(campaignID, from)})); k != nil && len(out) < limit && strings.HasPrefix(string(k), string(prefix)); k, v = c.Next() {
			var t campaign.SendTask
			if err := jsonValue(k, v, &t); err != nil {
				return err
			}
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: list tasks of %s: %w", campaignID, err)
	}
	return out, nil
}

// Open implements campaign.Tasks: a page of the open index in key order;
// the cursor is the page's last key, encoded.
func (s *CampaignStore) Open(_ context.Context, cursor string, limit int) ([]campaign.SendTask, string, error) {
	var after []byte
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		parts := strings.Split(string(b), "\x00")
		if err != nil || len(parts) != 2 || parts[0] == "" || parts[1] == "" {
			return nil, "", fmt.Errorf("cursor %q: %w", cursor, campaign.ErrBadCursor)
		}
		after = b
	}
	var out []campaign.SendTask
	next := ""
	err := s.db.View(func(tx *bolt.Tx) error {
		tasks := tx.Bucket(bucketCampaignTasks)
		c := tx.Bucket(bucketCampaignOpen).Cursor()
		k, _ := c.First()
		if after != nil {
			if k, _ = c.Seek(after); k != nil && string(k) == string(after) {
				k, _ = c.Next()
			}
		}
		for ; k != nil; k, _ = c.Next() {
			if len(out) == max(limit, 1) {
				next = base64.RawURLEncoding.EncodeToString(campaignTaskKey(out[len(out)-1].Key()))
				return nil
			}
			var t campaign.SendTask
			if err := jsonValue(k, tasks.Get(k), &t); err != nil {
				return err
			}
			out = append(out, t)
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("boltstore: read open tasks: %w", err)
	}
	return out, next, nil
}

// Campaign implements campaign.Campaigns.
func (s *CampaignStore) Campaign(_ context.Context, id string) (campaign.Campaign, error) {
	var c campaign.Campaign
	var found bool
	err := s.db.View(func(tx *bolt.Tx) (err error) {
		found, err = getJSON(tx.Bucket(bucketCampaigns), []byte(id), &c)
		return err
	})
	if err != nil {
		return campaign.Campaign{}, fmt.Errorf("boltstore: get campaign %s: %w", id, err)
	}
	if !found {
		return campaign.Campaign{}, fmt.Errorf("campaign %s: %w", id, campaign.ErrNotFound)
	}
	return c, nil
}

// SetStatus implements campaign.Campaigns: only from one of from
// (ErrConditionFailed otherwise, a missing campaign included).
func (s *CampaignStore) SetStatus(_ context.Context, id string, from []campaign.Status, to campaign.Status, reason string, now time.Time) error {
	if len(from) == 0 {
		return fmt.Errorf("boltstore: set campaign %s status: no status to move from", id)
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCampaigns)
		var c campaign.Campaign
		found, err := getJSON(b, []byte(id), &c)
		if err != nil {
			return err
		}
		if !found || !slices.Contains(from, c.Status) {
			return campaign.ErrConditionFailed
		}
		c.Status, c.UpdatedAt = to, now.UTC()
		if reason != "" {
			c.CancelReason = reason
		}
		return putJSON(b, []byte(id), c)
	})
	if err != nil {
		return fmt.Errorf("boltstore: set campaign %s status %s: %w", id, to, err)
	}
	return nil
}

// Owned reads one page of owner's campaigns, newest first: summaries
// (id, subject, status, total, created and updated) without body or
// rules, as the DynamoDB owner index projects them. The cursor is
// opaque; "" starts, a returned "" ends; one that no page of owner's
// returned is campaign.ErrBadCursor.
func (s *CampaignStore) Owned(_ context.Context, owner, cursor string, limit int) ([]campaign.Campaign, string, error) {
	prefix := owner + "\x00"
	start := []byte(prefix + "\xff")
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		parts := strings.Split(strings.TrimPrefix(string(b), prefix), "\x00")
		if err == nil && (!strings.HasPrefix(string(b), prefix) || len(parts) != 2 || parts[1] == "") {
			err = errors.New("not a key of this owner")
		}
		if err == nil {
			_, err = time.Parse(time.RFC3339Nano, parts[0])
		}
		if err != nil {
			return nil, "", fmt.Errorf("cursor %q: %w (%w)", cursor, campaign.ErrBadCursor, err)
		}
		start = b
	}
	var out []campaign.Campaign
	next := ""
	err := s.db.View(func(tx *bolt.Tx) error {
		cb := tx.Bucket(bucketCampaigns)
		c := tx.Bucket(bucketCampaignOwners).Cursor()
		k, _ := c.Seek(start)
		if k == nil {
			k, _ = c.Last()
		} else {
			k, _ = c.Prev()
		}
		var last []byte
		for ; k != nil && strings.HasPrefix(string(k), prefix); k, _ = c.Prev() {
			if len(out) == max(limit, 1) {
				next = base64.RawURLEncoding.EncodeToString(last)
				return nil
			}
			id := string(k[strings.LastIndexByte(string(k), 0)+1:])
			var full campaign.Campaign
			if _, err := getJSON(cb, []byte(id), &full); err != nil {
				return err
			}
			out = append(out, campaign.Campaign{ID: full.ID, OwnerID: owner, Subject: full.Subject, Status: full.Status,
				Total: full.Total, CreatedAt: full.CreatedAt, UpdatedAt: full.UpdatedAt})
			last = slices.Clone(k)
		}
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("boltstore: list campaigns of %s: %w", owner, err)
	}
	return out, next, nil
}

// Complete reports whether every task of c was written (its last one
// exists).
func (s *CampaignStore) Complete(ctx context.Context, c campaign.Campaign) (bool, error) {
	if c.Total == 0 {
		return true, nil
	}
	_, err := s.Get(ctx, campaign.Key{CampaignID: c.ID, TaskID: campaign.TaskID(c.ID, c.Total-1)})
	if errors.Is(err, campaign.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Counts counts a campaign's tasks by state.
func (s *CampaignStore) Counts(_ context.Context, campaignID string) (map[campaign.State]int, error) {
	counts := map[campaign.State]int{}
	prefix := campaignID + "\x00"
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketCampaignTasks).Cursor()
		for k, v := c.Seek([]byte(prefix)); k != nil && strings.HasPrefix(string(k), prefix); k, v = c.Next() {
			var t struct{ State campaign.State }
			if err := jsonValue(k, v, &t); err != nil {
				return err
			}
			counts[t.State]++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: count tasks of %s: %w", campaignID, err)
	}
	return counts, nil
}

// Provisioning lists the ids of the campaigns whose status is
// Provisioning (a restart resumes their provisioning).
func (s *CampaignStore) Provisioning(context.Context) ([]string, error) {
	var ids []string
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCampaigns).ForEach(func(k, v []byte) error {
			var c struct{ Status campaign.Status }
			if err := jsonValue(k, v, &c); err != nil {
				return err
			}
			if c.Status == campaign.Provisioning {
				ids = append(ids, string(k))
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: provisioning campaigns: %w", err)
	}
	return ids, nil
}

// CampaignCheckpoints keeps provisioning checkpoints
// (provision.Checkpoints).
type CampaignCheckpoints struct{ db *bolt.DB }

var _ provision.Checkpoints = CampaignCheckpoints{}

// CampaignCheckpoints is the store's provisioning checkpoints.
func (d *DB) CampaignCheckpoints() CampaignCheckpoints { return CampaignCheckpoints{db: d.db} }

// Load implements provision.Checkpoints.
func (c CampaignCheckpoints) Load(_ context.Context, campaignID string) (provision.Checkpoint, error) {
	cp := provision.Checkpoint{CampaignID: campaignID}
	err := c.db.View(func(tx *bolt.Tx) error {
		_, err := getJSON(tx.Bucket(bucketCampaignCheckpoints), []byte(campaignID), &cp)
		return err
	})
	if err != nil {
		return provision.Checkpoint{}, fmt.Errorf("boltstore: load checkpoint of %s: %w", campaignID, err)
	}
	return cp, nil
}

// Save implements provision.Checkpoints.
func (c CampaignCheckpoints) Save(_ context.Context, cp provision.Checkpoint) error {
	cp.UpdatedAt = cp.UpdatedAt.UTC()
	err := c.db.Update(func(tx *bolt.Tx) error {
		return putJSON(tx.Bucket(bucketCampaignCheckpoints), []byte(cp.CampaignID), cp)
	})
	if err != nil {
		return fmt.Errorf("boltstore: save checkpoint of %s: %w", cp.CampaignID, err)
	}
	return nil
}

// ReplaceCampaignSchedules saves what the dev server's campaign timer
// holds (its in-memory stand-in, as ReplaceSchedules saves the task
// timer's), replacing what was saved.
func (d *DB) ReplaceCampaignSchedules(ss []timer.Schedule) error {
	keys := make([][]byte, len(ss))
	vals := make([]any, len(ss))
	for i, s := range ss {
		// A timer may hold several schedules of a name (Step Functions
		// executions of other due times): the due time is part of the key.
		keys[i] = []byte(s.Name + "\x00" + keyTime(s.At))
		vals[i] = s
	}
	if err := d.replace(bucketCampaignTimer, keys, vals); err != nil {
		return fmt.Errorf("boltstore: save campaign schedules: %w", err)
	}
	return nil
}

// CampaignSchedules returns the saved campaign schedules, ordered by
// name and due time.
func (d *DB) CampaignSchedules() ([]timer.Schedule, error) {
	return each[timer.Schedule](d, bucketCampaignTimer)
}

// AppendEmailOnce appends e to the outbox once per key (a campaign
// send's idempotency key): it returns the email appended with key, and
// first true when this call appended it. The check, the append and the
// receipt are one transaction, so no crash leaves an email without its
// receipt (sent twice) or a receipt without its email (never sent).
func (d *DB) AppendEmailOnce(key string, e Email) (stored Email, first bool, err error) {
	err = d.db.Update(func(tx *bolt.Tx) error {
		rb := tx.Bucket(bucketCampaignReceipts)
		if seq := rb.Get([]byte(key)); seq != nil {
			_, err := getJSON(tx.Bucket(bucketOutbox), seq, &stored)
			return err
		}
		var err error
		if stored, err = appendEmail(tx, e); err != nil {
			return err
		}
		first = true
		return rb.Put([]byte(key), seqKey(stored.Seq))
	})
	if err != nil {
		return Email{}, false, fmt.Errorf("boltstore: append email %s: %w", key, err)
	}
	return stored, first, nil
}

// EmailOnce returns the email AppendEmailOnce appended with key; found
// false if none.
func (d *DB) EmailOnce(key string) (e Email, found bool, err error) {
	err = d.db.View(func(tx *bolt.Tx) error {
		seq := tx.Bucket(bucketCampaignReceipts).Get([]byte(key))
		if seq == nil {
			return nil
		}
		found, err = getJSON(tx.Bucket(bucketOutbox), seq, &e)
		return err
	})
	if err != nil {
		return Email{}, false, fmt.Errorf("boltstore: read email %s: %w", key, err)
	}
	return e, found, nil
}

func seqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

// SenderLimits keeps each campaign sender's counts per day
// (limits.Counters), exactly as strict as limits.Memory and the
// DynamoDB counters: the same all-or-none condition, a missing counter
// counts 0, an add whose By is over its Max is refused. It forgets no
// day (DynamoDB's TTL deletes one only after it).
type SenderLimits struct{ db *bolt.DB }

var _ limits.Counters = SenderLimits{}

// SenderLimits is the store's sender limit counters.
func (d *DB) SenderLimits() SenderLimits { return SenderLimits{db: d.db} }

type dayCounts struct {
	Counts    map[string]int64 `json:"counts"`
	ExpiresAt time.Time        `json:"expiresAt"`
}

// Add implements limits.Counters.
func (l SenderLimits) Add(_ context.Context, key limits.Key, expires time.Time, adds []limits.Add) (map[string]int64, bool, error) {
	var current map[string]int64
	ok := false
	err := l.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSenderLimits)
		k := []byte(key.Sender + "\x00" + key.Day)
		var day dayCounts
		if _, err := getJSON(b, k, &day); err != nil {
			return err
		}
		for _, a := range adds {
			// DynamoDB's condition: attribute_not_exists(n) OR n <= Max - By,
			// with By > Max refused before it is asked.
			if a.By > a.Max || day.Counts[a.Counter] > a.Max-a.By {
				current = maps.Clone(day.Counts)
				return nil
			}
		}
		if day.Counts == nil {
			day.Counts = map[string]int64{}
		}
		for _, a := range adds {
			day.Counts[a.Counter] += a.By
		}
		day.ExpiresAt, ok = expires.UTC(), true
		return putJSON(b, k, day)
	})
	if err != nil {
		return nil, false, fmt.Errorf("boltstore: count sender %s: %w", key.Sender, err)
	}
	return current, ok, nil
}

// Counts are key's current counters.
func (l SenderLimits) Counts(key limits.Key) (map[string]int64, error) {
	var day dayCounts
	err := l.db.View(func(tx *bolt.Tx) error {
		_, err := getJSON(tx.Bucket(bucketSenderLimits), []byte(key.Sender+"\x00"+key.Day), &day)
		return err
	})
	return day.Counts, err
}

// Suppressions is the dev server's one suppression list
// (suppress.Store), as suppress.Memory keeps it: per normalized address,
// whatever sender added it, the first entry kept.
type Suppressions struct{ db *bolt.DB }

var _ suppress.Store = Suppressions{}

// Suppressions is the store's suppression list.
func (d *DB) Suppressions() Suppressions { return Suppressions{db: d.db} }

// Add implements suppress.Store.
func (s Suppressions) Add(_ context.Context, e suppress.Entry) (bool, error) {
	e.Sender, e.Address = suppress.Normalize(e.Sender), suppress.Normalize(e.Address)
	if e.Sender == "" || e.Address == "" || e.Reason == "" {
		return false, errors.New("boltstore: a suppression needs a sender, an address and a reason")
	}
	e.At = e.At.UTC()
	added := false
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSuppressions)
		k := []byte(e.Address)
		if b.Get(k) != nil {
			return nil
		}
		added = true
		return putJSON(b, k, e)
	})
	if err != nil {
		return false, fmt.Errorf("boltstore: suppress %s: %w", e.Address, err)
	}
	return added, nil
}

// Get implements suppress.Store.
func (s Suppressions) Get(_ context.Context, address string) (e suppress.Entry, found bool, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		found, err = getJSON(tx.Bucket(bucketSuppressions), []byte(suppress.Normalize(address)), &e)
		return err
	})
	if err != nil {
		return suppress.Entry{}, false, fmt.Errorf("boltstore: suppression of %s: %w", address, err)
	}
	return e, found, nil
}
