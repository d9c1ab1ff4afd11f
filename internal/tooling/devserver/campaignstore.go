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

// announcer publishes every campaign table write (memory.CampaignStore's
// OnWrite) as a campaignapi.Progress, as the table's stream handler does
// in AWS.
type announcer struct {
	store *memory.CampaignStore
	pub   campaignapi.ProgressPublisher
	clock campaign.Clock
	log   *slog.Logger

	mu       sync.Mutex // one announcement at a time, asOf strictly increasing
	lastAsOf time.Time
}

// announcing sets store's OnWrite to announce its writes to pub.
func announcing(store *memory.CampaignStore, pub campaignapi.ProgressPublisher, clock campaign.Clock, log *slog.Logger) *memory.CampaignStore {
	store.OnWrite = (&announcer{store: store, pub: pub, clock: clock, log: log}).announce
	return store
}

// announce publishes what changed, as the stream handler would. An
// update's asOf is later than the previous one's even when the clock
// reads the same instant, so a client that applies only newer updates
// misses none.
func (a *announcer) announce(ctx context.Context, campaignID string, sends []campaign.SendTask) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.clock.Now().UTC()
	if !now.After(a.lastAsOf) {
		now = a.lastAsOf.Add(time.Nanosecond)
	}
	a.lastAsOf = now
	ch := campaignapi.Changes{Sends: sends, Campaigns: []string{campaignID}}
	if err := campaignapi.Announce(context.WithoutCancel(ctx), a.store, a.pub, ch, now); err != nil {
		a.log.ErrorContext(ctx, "campaign progress not announced", "error", err.Error())
	}
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
