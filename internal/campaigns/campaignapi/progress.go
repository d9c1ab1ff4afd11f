package campaignapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
)

// Progress is one live update of a campaign page: the campaign's status
// and counts per state as read after the changes it reports, and the
// sends that changed (the same JSON as GET /campaigns/{id} shows them).
// In the cloud the campaign table's stream handler publishes it to AWS
// AppSync Events on ProgressChannel(owner, id); `make dev` pushes the
// same JSON over server-sent events. Delivery is at least once and may
// be out of order, so a client applies an update only when its AsOf is
// newer than the last one it applied, and replaces a send row whole.
type Progress struct {
	CampaignID string         `json:"campaignId"`
	Status     string         `json:"status"`
	AsOf       string         `json:"asOf"`
	Counts     map[string]int `json:"counts"`
	Sends      []sendJSON     `json:"sends"`
}

// ProgressNamespace is the AppSync Events channel namespace of campaign
// progress.
const ProgressNamespace = "campaigns"

// ProgressChannel is the channel of one campaign's progress:
// /campaigns/<owner sub>/<campaign id>. The owner's sub is a segment so
// that the namespace's subscribe handler can let a user subscribe only
// to their own campaigns.
func ProgressChannel(ownerID, campaignID string) string {
	return "/" + ProgressNamespace + "/" + ownerID + "/" + campaignID
}

// NewProgress is the update for c after the changed sends, with the
// counts read after them.
func NewProgress(c campaign.Campaign, counts map[campaign.State]int, changed []campaign.SendTask, asOf time.Time) Progress {
	j := campaignOf(c, counts, nil)
	if j.Counts == nil {
		j.Counts = campaignOf(c, map[campaign.State]int{}, nil).Counts
	}
	return Progress{CampaignID: c.ID, Status: string(c.Status), AsOf: asOf.UTC().Format(time.RFC3339Nano),
		Counts: j.Counts, Sends: sendsOf(changed)}
}

// ProgressStore is what announcing progress reads: the campaign item and
// its counts per state.
type ProgressStore interface {
	Campaign(ctx context.Context, id string) (campaign.Campaign, error)
	Counts(ctx context.Context, campaignID string) (map[campaign.State]int, error)
}

// ProgressPublisher delivers one update to a channel (AppSync Events in
// the cloud, server-sent events under `make dev`).
type ProgressPublisher interface {
	Publish(ctx context.Context, channel string, p Progress) error
}

// Changes are what a batch of table changes touched: send tasks (their
// new images) and campaign items changed without a send (a status
// change, such as a cancel).
type Changes struct {
	Sends     []campaign.SendTask
	Campaigns []string
}

// Announce publishes one Progress per campaign that changes touched, in
// the order first seen, with the counts read after the changes. A
// campaign that no longer exists is skipped. It tries every campaign and
// returns their errors joined: the caller retries the batch, and a
// client that sees an update twice applies it once (Progress.AsOf).
func Announce(ctx context.Context, s ProgressStore, pub ProgressPublisher, ch Changes, now time.Time) error {
	var order []string
	sends := map[string][]campaign.SendTask{}
	seen := func(id string) {
		if _, ok := sends[id]; !ok {
			sends[id] = nil
			order = append(order, id)
		}
	}
	for _, t := range ch.Sends {
		seen(t.CampaignID)
		sends[t.CampaignID] = append(sends[t.CampaignID], t)
	}
	for _, id := range ch.Campaigns {
		seen(id)
	}
	var errs []error
	for _, id := range order {
		c, err := s.Campaign(ctx, id)
		if errors.Is(err, campaign.ErrNotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("announce %s: read campaign: %w", id, err))
			continue
		}
		counts, err := s.Counts(ctx, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("announce %s: count: %w", id, err))
			continue
		}
		if err := pub.Publish(ctx, ProgressChannel(c.OwnerID, id), NewProgress(c, counts, sends[id], now)); err != nil {
			errs = append(errs, fmt.Errorf("announce %s: publish: %w", id, err))
		}
	}
	return errors.Join(errs...)
}
