// Package campaigndev runs scheduled campaigns in one process for
// `make dev`: the real campaign services (provision, send, reconciler,
// cancel, campaignapi) over the in-memory stand-ins of
// internal/campaign/inmem, with an in-process scheduler that fires each
// schedule at its at() time, the dev server's outbox as the Sender, and
// every task or campaign change announced as a campaignapi.Progress to a
// Hub that serves server-sent events (the local stand-in of the table's
// stream handler and AWS AppSync Events). State is kept in memory: a
// restart of the dev server forgets its campaigns.
package campaigndev

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/campaign/campaignapi"
	"github.com/unschedule/unschedule/internal/campaign/inmem"
)

// Store is the in-memory store with the API's own methods (Create,
// Complete, Owned) and, like the table's stream handler, an announcement
// of every successful task or campaign write.
type Store struct {
	*inmem.Store
	pub   campaignapi.ProgressPublisher
	clock campaign.Clock
	log   *slog.Logger

	mu    sync.Mutex
	owned map[string][]string // owner -> campaign ids, oldest first

	announceMu sync.Mutex // one announcement at a time, asOf strictly increasing
	lastAsOf   time.Time
}

var _ campaignapi.Store = (*Store)(nil)

// NewStore returns an empty store that announces to pub.
func NewStore(pub campaignapi.ProgressPublisher, clock campaign.Clock, log *slog.Logger) *Store {
	return &Store{Store: inmem.NewStore(), pub: pub, clock: clock, log: log, owned: map[string][]string{}}
}

// announce publishes what changed, as the stream handler would. An
// update's asOf is later than the previous one's even when the clock
// reads the same instant, so a client that applies only newer updates
// misses none.
func (s *Store) announce(ctx context.Context, ch campaignapi.Changes) {
	s.announceMu.Lock()
	defer s.announceMu.Unlock()
	now := s.clock.Now().UTC()
	if !now.After(s.lastAsOf) {
		now = s.lastAsOf.Add(time.Nanosecond)
	}
	s.lastAsOf = now
	if err := campaignapi.Announce(context.WithoutCancel(ctx), s.Store, s.pub, ch, now); err != nil {
		s.log.ErrorContext(ctx, "campaign progress not announced", "error", err.Error())
	}
}

// Create implements campaignapi.Store.
func (s *Store) Create(ctx context.Context, c campaign.Campaign, tasks []campaign.SendTask) error {
	s.PutCampaign(c)
	s.PutTasks(tasks...)
	s.mu.Lock()
	s.owned[c.OwnerID] = append(s.owned[c.OwnerID], c.ID)
	s.mu.Unlock()
	s.announce(ctx, campaignapi.Changes{Campaigns: []string{c.ID}})
	return nil
}

// Complete implements campaignapi.Store: an in-memory create is never
// left half done.
func (s *Store) Complete(context.Context, campaign.Campaign) (bool, error) { return true, nil }

// Owned implements campaignapi.Store: the owner's campaigns, newest
// first; the cursor is the offset of the next page.
func (s *Store) Owned(ctx context.Context, owner, cursor string, limit int) ([]campaign.Campaign, string, error) {
	from := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return nil, "", fmt.Errorf("cursor %q: %w", cursor, campaign.ErrBadCursor)
		}
		from = n
	}
	s.mu.Lock()
	ids := slices.Clone(s.owned[owner])
	s.mu.Unlock()
	slices.Reverse(ids)
	var out []campaign.Campaign
	for _, id := range ids[min(from, len(ids)):min(from+max(limit, 1), len(ids))] {
		c, err := s.Campaign(ctx, id)
		if err != nil {
			return nil, "", err
		}
		out = append(out, c)
	}
	next := ""
	if from+len(out) < len(ids) {
		next = strconv.Itoa(from + len(out))
	}
	return out, next, nil
}

// Claim implements campaign.Tasks and announces the Running task.
func (s *Store) Claim(ctx context.Context, k campaign.Key, due, now time.Time, lease time.Duration) (campaign.SendTask, error) {
	t, err := s.Store.Claim(ctx, k, due, now, lease)
	if err == nil {
		s.announce(ctx, campaignapi.Changes{Sends: []campaign.SendTask{t}})
	}
	return t, err
}

// Replace implements campaign.Tasks and announces the new task.
func (s *Store) Replace(ctx context.Context, prev, next campaign.SendTask) error {
	err := s.Store.Replace(ctx, prev, next)
	if err == nil {
		ch := campaignapi.Changes{Sends: []campaign.SendTask{next}}
		if next.State.Terminal() { // it may have completed the campaign
			ch.Campaigns = []string{next.CampaignID}
		}
		s.announce(ctx, ch)
	}
	return err
}

// SetStatus implements campaign.Campaigns and announces the campaign.
func (s *Store) SetStatus(ctx context.Context, id string, from []campaign.Status, to campaign.Status, reason string, now time.Time) error {
	err := s.Store.SetStatus(ctx, id, from, to, reason, now)
	if err == nil {
		s.announce(ctx, campaignapi.Changes{Campaigns: []string{id}})
	}
	return err
}

// Owner is the owner of campaign id ("" when there is none).
func (s *Store) Owner(id string) string {
	c, err := s.Campaign(context.Background(), id)
	if err != nil {
		return ""
	}
	return c.OwnerID
}
