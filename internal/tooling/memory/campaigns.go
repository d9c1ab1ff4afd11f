package memory

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/inmem"
)

// CampaignStore is the campaign table in memory: campaigns and their send
// tasks, written by plain puts (test setup) and by the campaign rules'
// conditional writes, each through inmem.CondPut, the one conditional
// write of the in-memory stand-ins. It is never more lenient than the DynamoDB adapter
// (campaigntable.CampaignStore): what that refuses, this refuses too.
type CampaignStore struct {
	mu        sync.Mutex
	tasks     map[campaign.Key]campaign.SendTask
	campaigns map[string]campaign.Campaign
	// states counts each campaign's tasks by state (Counts, CountOpen
	// and the completion rule read it).
	states map[string]map[campaign.State]int
	// open is the sparse open index (openIndex), kept on writes.
	open openIndex
	// Writes counts successful conditional task writes.
	Writes int
	// version counts every write (Version).
	version uint64
	// Fail, when set, is called before each conditional write (op
	// "Claim", "TakeOver", "Replace", "SetStatus"); a non-nil error is
	// returned instead of doing it (fault injection).
	Fail func(op string) error
	// OnWrite, when set, is told after each successful Create and
	// conditional write which campaign it wrote and the tasks it wrote
	// (none for the campaign's own), as the table's stream tells.
	OnWrite func(ctx context.Context, campaignID string, sends []campaign.SendTask)
}

var (
	_ campaign.Tasks     = (*CampaignStore)(nil)
	_ campaign.Campaigns = (*CampaignStore)(nil)
)

// NewCampaignStore returns an empty campaign table.
func NewCampaignStore() *CampaignStore {
	return &CampaignStore{tasks: map[campaign.Key]campaign.SendTask{}, campaigns: map[string]campaign.Campaign{},
		states: map[string]map[campaign.State]int{}}
}

// PutCampaign writes a campaign as is.
func (s *CampaignStore) PutCampaign(c campaign.Campaign) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.campaigns[c.ID] = c
	s.version++
}

// PutTasks writes tasks as they are.
func (s *CampaignStore) PutTasks(ts ...campaign.SendTask) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putTasks(ts)
}

// putTasks writes tasks as they are; the caller holds mu.
func (s *CampaignStore) putTasks(ts []campaign.SendTask) {
	for _, t := range ts {
		old, found := s.tasks[t.Key()]
		s.tasks[t.Key()] = t
		s.count(old, found, t)
	}
}

// count keeps the state counts of a task's campaign and the open index
// as old (found: there was one) becomes t; the caller holds mu.
func (s *CampaignStore) count(old campaign.SendTask, found bool, t campaign.SendTask) {
	s.version++
	n := s.states[t.CampaignID]
	if n == nil {
		n = map[campaign.State]int{}
		s.states[t.CampaignID] = n
	}
	n[t.State]++
	if found {
		n[old.State]--
		if n[old.State] == 0 {
			delete(n, old.State)
		}
	}
	s.open.note(t)
}

// tally counts a campaign's tasks that are terminal (or, terminal false,
// open); the caller holds mu.
func (s *CampaignStore) tally(campaignID string, terminal bool) int {
	sum := 0
	for st, n := range s.states[campaignID] {
		if st.Terminal() == terminal {
			sum += n
		}
	}
	return sum
}

// settle completes the campaign once every one of its tasks is terminal:
// Provisioning or Active → Completed, in the same locked write as the
// last task's (the rule campaigntable.CampaignStore keeps); the caller
// holds mu.
func (s *CampaignStore) settle(id string, now time.Time) {
	c, ok := s.campaigns[id]
	if ok && c.Total > 0 && s.tally(id, true) >= c.Total && (c.Status == campaign.Provisioning || c.Status == campaign.Active) {
		c.Status, c.UpdatedAt = campaign.Completed, now
		s.campaigns[id] = c
	}
}

// All returns every task of a campaign in index order.
func (s *CampaignStore) All(campaignID string) []campaign.SendTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []campaign.SendTask
	for k, t := range s.tasks {
		if k.CampaignID == campaignID {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b campaign.SendTask) int { return a.Index - b.Index })
	return out
}

// CountOpen counts a campaign's tasks that are not terminal.
func (s *CampaignStore) CountOpen(campaignID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tally(campaignID, false)
}

// Get implements campaign.Tasks.
func (s *CampaignStore) Get(_ context.Context, k campaign.Key) (campaign.SendTask, error) {
	t, ok := inmem.Lookup(&s.mu, s.tasks, k)
	if !ok {
		return campaign.SendTask{}, fmt.Errorf("task %s: %w", k.TaskID, campaign.ErrNotFound)
	}
	return t, nil
}

// Claim implements campaign.Tasks with the campaign.Claim rule (the
// contract's claim predicate).
func (s *CampaignStore) Claim(ctx context.Context, k campaign.Key, due, now time.Time, lease time.Duration) (campaign.SendTask, error) {
	return s.move(ctx, "Claim", k, func(t campaign.SendTask) (campaign.SendTask, error) { return campaign.Claim(t, due, now, lease) })
}

// TakeOver implements campaign.Tasks with the campaign.TakeOver rule
// (the contract's take-over predicate).
func (s *CampaignStore) TakeOver(ctx context.Context, k campaign.Key, due, now time.Time, lease time.Duration) (campaign.SendTask, error) {
	return s.move(ctx, "TakeOver", k, func(t campaign.SendTask) (campaign.SendTask, error) { return campaign.TakeOver(t, due, now, lease) })
}

// writeTask is a conditional write of the task at k: ok's condition on
// the stored task (found false: none), then next replaces it, the
// campaign's state counts and the open index follow, and a move into a
// terminal state settles the campaign in the same locked write.
func (s *CampaignStore) writeTask(op string, k campaign.Key, ok func(cur campaign.SendTask, found bool) error,
	next func(campaign.SendTask) campaign.SendTask) (before, after campaign.SendTask, err error) {
	return inmem.CondPut(&s.mu, s.Fail, op, s.tasks, k, ok, next, func(old campaign.SendTask, found bool, t campaign.SendTask) {
		s.count(old, found, t)
		s.Writes++
		if !old.State.Terminal() && t.State.Terminal() {
			s.settle(t.CampaignID, t.UpdatedAt)
		}
	})
}

// move applies a rule to the stored task as one conditional write.
func (s *CampaignStore) move(ctx context.Context, op string, k campaign.Key, rule func(campaign.SendTask) (campaign.SendTask, error)) (campaign.SendTask, error) {
	var next campaign.SendTask
	cur, _, err := s.writeTask(op, k,
		func(cur campaign.SendTask, found bool) (err error) {
			if !found {
				return fmt.Errorf("%s %s: missing: %w", op, k.TaskID, campaign.ErrConditionFailed)
			}
			if next, err = rule(cur); err != nil {
				return fmt.Errorf("%s %s: %w: %w", op, k.TaskID, campaign.ErrConditionFailed, err)
			}
			return nil
		},
		func(campaign.SendTask) campaign.SendTask { return next })
	if err != nil {
		return cur, err
	}
	return next, s.wrote(ctx, nil, k.CampaignID, next)
}

// wrote tells OnWrite of a successful write (err nil), and returns err.
func (s *CampaignStore) wrote(ctx context.Context, err error, campaignID string, sends ...campaign.SendTask) error {
	if err == nil && s.OnWrite != nil {
		s.OnWrite(ctx, campaignID, sends)
	}
	return err
}

// Replace implements campaign.Tasks: next replaces the stored task only
// while it still has prev's state and attempt.
func (s *CampaignStore) Replace(ctx context.Context, prev, next campaign.SendTask) error {
	if prev.Key() != next.Key() {
		return fmt.Errorf("replace task %s with %s: the keys differ", prev.ID, next.ID)
	}
	_, _, err := s.writeTask("Replace", prev.Key(),
		func(cur campaign.SendTask, found bool) error {
			if !found || cur.State != prev.State || cur.Attempt != prev.Attempt {
				return fmt.Errorf("replace %s: %w", prev.ID, campaign.ErrConditionFailed)
			}
			return nil
		},
		func(campaign.SendTask) campaign.SendTask { return next })
	return s.wrote(ctx, err, next.CampaignID, next)
}

// List implements campaign.Tasks.
func (s *CampaignStore) List(_ context.Context, campaignID string, from, limit int) ([]campaign.SendTask, error) {
	if from < 0 || limit < 1 {
		return nil, fmt.Errorf("list tasks of %s: from %d, limit %d: want from >= 0 and limit >= 1", campaignID, from, limit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []campaign.SendTask
	for i := from; len(out) < limit; i++ {
		t, ok := s.tasks[campaign.Key{CampaignID: campaignID, TaskID: campaign.TaskID(campaignID, i)}]
		if !ok {
			break
		}
		out = append(out, t)
	}
	return out, nil
}

// Open implements campaign.Tasks: a page of the open tasks in the open
// index's order (by task id, as DynamoDB's sparse index sorts them by
// its sort key; then by campaign), after the cursor: the last key of the
// page before, so writes between pages shift nothing, as on DynamoDB. A
// cursor that no page returned is campaign.ErrBadCursor.
func (s *CampaignStore) Open(_ context.Context, cursor string, limit int) ([]campaign.SendTask, string, error) {
	var after campaign.Key
	if cursor != "" {
		parts, err := decodeCursor(cursor, 2)
		if err != nil {
			return nil, "", err
		}
		after = campaign.Key{TaskID: parts[0], CampaignID: parts[1]}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, found := slices.BinarySearchFunc(s.open, after, indexOrder)
	if found && cursor != "" {
		i++
	}
	keys := s.open[i:min(i+max(limit, 1), len(s.open))]
	out := make([]campaign.SendTask, len(keys))
	for j, k := range keys {
		out[j] = s.tasks[k]
	}
	if i+len(keys) == len(s.open) {
		return out, "", nil
	}
	last := out[len(out)-1]
	return out, encodeCursor(last.ID + "\x00" + last.CampaignID), nil
}

// encodeCursor is the cursor after a page whose last index key is key
// (its parts joined by NUL).
func encodeCursor(key string) string { return base64.RawURLEncoding.EncodeToString([]byte(key)) }

// decodeCursor reads the n parts of an encodeCursor key, none empty;
// anything else is campaign.ErrBadCursor.
func decodeCursor(c string, n int) ([]string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	parts := strings.Split(string(b), "\x00")
	if err != nil || len(parts) != n || slices.Contains(parts, "") {
		return nil, fmt.Errorf("cursor %q: %w", c, campaign.ErrBadCursor)
	}
	return parts, nil
}

// indexOrder is the open index's order: by task id, then campaign.
func indexOrder(a, b campaign.Key) int {
	return cmp.Or(strings.Compare(a.TaskID, b.TaskID), strings.Compare(a.CampaignID, b.CampaignID))
}

// openIndex is the keys of the open tasks in index order, so that a page
// of Open is a binary search and a scan instead of a sort of the whole
// table. The caller holds the store's mu.
type openIndex []campaign.Key

// note follows a write of t: its key is in the index while it is open.
func (x *openIndex) note(t campaign.SendTask) {
	i, in := slices.BinarySearchFunc(*x, t.Key(), indexOrder)
	switch open := !t.State.Terminal(); {
	case open && !in:
		*x = slices.Insert(*x, i, t.Key())
	case !open && in:
		*x = slices.Delete(*x, i, i+1)
	}
}

// Campaign implements campaign.Campaigns.
func (s *CampaignStore) Campaign(_ context.Context, id string) (campaign.Campaign, error) {
	c, ok := inmem.Lookup(&s.mu, s.campaigns, id)
	if !ok {
		return campaign.Campaign{}, fmt.Errorf("campaign %s: %w", id, campaign.ErrNotFound)
	}
	return c, nil
}

// Counts is the number of a campaign's tasks in each state (the API's
// and the progress announcer's read).
func (s *CampaignStore) Counts(_ context.Context, campaignID string) (map[campaign.State]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[campaign.State]int{}
	maps.Copy(out, s.states[campaignID])
	return out, nil
}

// SetStatus implements campaign.Campaigns: only from one of the statuses
// from (none: refused, as the DynamoDB adapter refuses it).
func (s *CampaignStore) SetStatus(ctx context.Context, id string, from []campaign.Status, to campaign.Status, reason string, now time.Time) error {
	if len(from) == 0 {
		return fmt.Errorf("set campaign %s status: no status to move from", id)
	}
	_, _, err := inmem.CondPut(&s.mu, s.Fail, "SetStatus", s.campaigns, id,
		func(c campaign.Campaign, found bool) error {
			if !found || !slices.Contains(from, c.Status) {
				return fmt.Errorf("campaign %s to %s: %w", id, to, campaign.ErrConditionFailed)
			}
			return nil
		},
		func(c campaign.Campaign) campaign.Campaign {
			c.Status, c.UpdatedAt = to, now
			if reason != "" {
				c.CancelReason = reason
			}
			return c
		}, func(campaign.Campaign, bool, campaign.Campaign) { s.version++ })
	return s.wrote(ctx, err, id)
}

// ErrCampaignExists: Create found a campaign of that id (as
// campaigntable.ErrCampaignExists).
var ErrCampaignExists = errors.New("campaign exists")

// Create writes a new campaign and its tasks (campaignapi.Store);
// ErrCampaignExists when the id is taken, with nothing written.
func (s *CampaignStore) Create(ctx context.Context, c campaign.Campaign, tasks []campaign.SendTask) error {
	_, _, err := inmem.CondPut(&s.mu, nil, "Create", s.campaigns, c.ID,
		func(_ campaign.Campaign, taken bool) error {
			if taken {
				return fmt.Errorf("create campaign %s: %w", c.ID, ErrCampaignExists)
			}
			return nil
		},
		func(campaign.Campaign) campaign.Campaign { return c },
		func(campaign.Campaign, bool, campaign.Campaign) {
			s.version++
			s.putTasks(tasks)
		})
	return s.wrote(ctx, err, c.ID)
}

// Complete reports whether every task of c was written (its last one
// exists).
func (s *CampaignStore) Complete(_ context.Context, c campaign.Campaign) (bool, error) {
	_, ok := inmem.Lookup(&s.mu, s.tasks, campaign.Key{CampaignID: c.ID, TaskID: campaign.TaskID(c.ID, c.Total-1)})
	return c.Total == 0 || ok, nil
}

// ownerKey is a campaign's place in the owner index: owner, creation
// time and id, sorting as DynamoDB's index does.
func ownerKey(c campaign.Campaign) string {
	return c.OwnerID + "\x00" + c.CreatedAt.UTC().Format("2006-01-02T15:04:05.000000000Z") + "\x00" + c.ID
}

// Owned reads one page of owner's campaigns, newest first: summaries
// (id, subject, status, total, created and updated) without body or
// rules, as the DynamoDB owner index projects them. The cursor is the
// page's last index key, encoded; one that no page of owner's returned
// is campaign.ErrBadCursor.
func (s *CampaignStore) Owned(_ context.Context, owner, cursor string, limit int) ([]campaign.Campaign, string, error) {
	var after string
	if cursor != "" {
		parts, err := decodeCursor(cursor, 3)
		if err != nil {
			return nil, "", err
		}
		if _, terr := time.Parse(time.RFC3339Nano, parts[1]); parts[0] != owner || terr != nil {
			return nil, "", fmt.Errorf("cursor %q: %w: not a key of this owner's", cursor, campaign.ErrBadCursor)
		}
		after = strings.Join(parts, "\x00")
	}
	s.mu.Lock()
	var mine []campaign.Campaign
	for _, c := range s.campaigns {
		if c.OwnerID == owner && (after == "" || ownerKey(c) < after) {
			mine = append(mine, campaign.Campaign{ID: c.ID, OwnerID: owner, Subject: c.Subject, Status: c.Status,
				Total: c.Total, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt})
		}
	}
	s.mu.Unlock()
	slices.SortFunc(mine, func(a, b campaign.Campaign) int { return strings.Compare(ownerKey(b), ownerKey(a)) })
	if len(mine) <= max(limit, 1) {
		return mine, "", nil
	}
	mine = mine[:max(limit, 1)]
	return mine, encodeCursor(ownerKey(mine[len(mine)-1])), nil
}

// Provisioning lists the ids of the campaigns whose status is
// Provisioning (a restart resumes their provisioning).
func (s *CampaignStore) Provisioning(context.Context) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id, c := range s.campaigns {
		if c.Status == campaign.Provisioning {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// Version changes with every write: a save may skip a store whose
// version it saved.
func (s *CampaignStore) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// campaignsJSON is the table as MarshalJSON writes it.
type campaignsJSON struct {
	Campaigns []campaign.Campaign `json:"campaigns"`
	Tasks     []campaign.SendTask `json:"tasks"`
}

// MarshalJSON writes every campaign and task (make dev's saved state).
func (s *CampaignStore) MarshalJSON() ([]byte, error) {
	s.mu.Lock()
	v := campaignsJSON{Campaigns: slices.Collect(maps.Values(s.campaigns)), Tasks: slices.Collect(maps.Values(s.tasks))}
	s.mu.Unlock()
	slices.SortFunc(v.Campaigns, func(a, b campaign.Campaign) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(v.Tasks, func(a, b campaign.SendTask) int { return indexOrder(a.Key(), b.Key()) })
	return json.Marshal(v)
}

// UnmarshalJSON puts what MarshalJSON wrote into the store, keeping its
// counts and open index as the writes would.
func (s *CampaignStore) UnmarshalJSON(b []byte) error {
	var v campaignsJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	for _, c := range v.Campaigns {
		s.PutCampaign(c)
	}
	s.PutTasks(v.Tasks...)
	return nil
}
