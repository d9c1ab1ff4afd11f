package devserver

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/unsubscribe"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// campaignStore is memory.CampaignStore announcing every successful task
// or campaign write as a campaignapi.Progress, as the table's stream
// handler does in AWS.
type campaignStore struct {
	*memory.CampaignStore
	pub   campaignapi.ProgressPublisher
	clock campaign.Clock
	log   *slog.Logger

	announceMu sync.Mutex // one announcement at a time, asOf strictly increasing
	lastAsOf   time.Time
}

var _ campaignapi.Store = (*campaignStore)(nil)

// announce publishes what changed, as the stream handler would. An
// update's asOf is later than the previous one's even when the clock
// reads the same instant, so a client that applies only newer updates
// misses none.
func (s *campaignStore) announce(ctx context.Context, ch campaignapi.Changes) {
	s.announceMu.Lock()
	defer s.announceMu.Unlock()
	now := s.clock.Now().UTC()
	if !now.After(s.lastAsOf) {
		now = s.lastAsOf.Add(time.Nanosecond)
	}
	s.lastAsOf = now
	if err := campaignapi.Announce(context.WithoutCancel(ctx), s.CampaignStore, s.pub, ch, now); err != nil {
		s.log.ErrorContext(ctx, "campaign progress not announced", "error", err.Error())
	}
}

// announceIf announces ch when err is nil, and returns err.
func (s *campaignStore) announceIf(ctx context.Context, err error, ch campaignapi.Changes) error {
	if err == nil {
		s.announce(ctx, ch)
	}
	return err
}

// Create implements campaignapi.Store and announces the campaign.
func (s *campaignStore) Create(ctx context.Context, c campaign.Campaign, tasks []campaign.SendTask) error {
	return s.announceIf(ctx, s.CampaignStore.Create(ctx, c, tasks), campaignapi.Changes{Campaigns: []string{c.ID}})
}

// Claim implements campaign.Tasks and announces the Running task.
func (s *campaignStore) Claim(ctx context.Context, k campaign.Key, due, now time.Time, lease time.Duration) (campaign.SendTask, error) {
	return s.announced(s.CampaignStore.Claim(ctx, k, due, now, lease))
}

// TakeOver implements campaign.Tasks and announces the task claimed anew.
func (s *campaignStore) TakeOver(ctx context.Context, k campaign.Key, due, now time.Time, lease time.Duration) (campaign.SendTask, error) {
	return s.announced(s.CampaignStore.TakeOver(ctx, k, due, now, lease))
}

func (s *campaignStore) announced(t campaign.SendTask, err error) (campaign.SendTask, error) {
	return t, s.announceIf(context.Background(), err, campaignapi.Changes{Sends: []campaign.SendTask{t}})
}

// Replace implements campaign.Tasks and announces the new task.
func (s *campaignStore) Replace(ctx context.Context, prev, next campaign.SendTask) error {
	ch := campaignapi.Changes{Sends: []campaign.SendTask{next}}
	if next.State.Terminal() { // it may have completed the campaign
		ch.Campaigns = []string{next.CampaignID}
	}
	return s.announceIf(ctx, s.CampaignStore.Replace(ctx, prev, next), ch)
}

// SetStatus implements campaign.Campaigns and announces the campaign.
func (s *campaignStore) SetStatus(ctx context.Context, id string, from []campaign.Status, to campaign.Status, reason string, now time.Time) error {
	return s.announceIf(ctx, s.CampaignStore.SetStatus(ctx, id, from, to, reason, now), campaignapi.Changes{Campaigns: []string{id}})
}

// owner is the owner of campaign id ("" when there is none).
func (s *campaignStore) owner(id string) string {
	c, err := s.Campaign(context.Background(), id)
	if err != nil {
		return ""
	}
	return c.OwnerID
}

// outboxSender is the campaign.Sender of make dev: each message lands in
// the outbox once per idempotency key (one write, so a restart never
// sends one twice), on behalf of the campaign's owner.
type outboxSender struct {
	db        *store
	campaigns campaign.Campaigns
	clock     campaign.Clock
}

var _ campaign.Sender = outboxSender{}

// ownerOf reads the owner of the campaign whose task the key
// (send-<campaign id>-<index>, SendTask.IdempotencyKey) names.
func (s outboxSender) ownerOf(ctx context.Context, key string) (string, error) {
	id := strings.TrimPrefix(key, "send-")
	if i := strings.LastIndexByte(id, '-'); i > 0 {
		id = id[:i]
	}
	c, err := s.campaigns.Campaign(ctx, id)
	if err != nil {
		return "", fmt.Errorf("owner of %s: %w", key, err)
	}
	return c.OwnerID, nil
}

// Send implements campaign.Sender.
func (s outboxSender) Send(ctx context.Context, m campaign.Message) (campaign.Receipt, error) {
	if e, found := s.db.EmailOnce(m.IdempotencyKey); found {
		return receipt(e), nil
	}
	owner, err := s.ownerOf(ctx, m.IdempotencyKey)
	if err != nil {
		return campaign.Receipt{}, err
	}
	var headers []Header // the ses adapter adds the same ones
	if m.UnsubscribeURL != "" {
		for _, h := range unsubscribe.Headers(m.UnsubscribeURL) {
			headers = append(headers, Header{Name: h[0], Value: h[1]})
		}
	}
	e, _ := s.db.AppendEmailOnce(m.IdempotencyKey, Email{Kind: EmailKindCampaign, At: s.clock.Now().UTC(),
		UserID: owner, To: []string{m.To}, Subject: m.Subject, Body: m.Body, Headers: headers})
	return receipt(e), nil
}

// Sent implements campaign.Sender.
func (s outboxSender) Sent(_ context.Context, key string) (campaign.Receipt, error) {
	e, found := s.db.EmailOnce(key)
	if !found {
		return campaign.Receipt{}, fmt.Errorf("%s: %w", key, campaign.ErrNotSent)
	}
	return receipt(e), nil
}

func receipt(e Email) campaign.Receipt {
	return campaign.Receipt{MessageID: "dev-" + strconv.FormatUint(e.Seq, 10), SentAt: e.At}
}
