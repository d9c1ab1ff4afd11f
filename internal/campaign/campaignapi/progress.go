package campaignapi

import (
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
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
	j := campaignOf(c, counts, nil, 0)
	if j.Counts == nil {
		j.Counts = campaignOf(c, map[campaign.State]int{}, nil, 0).Counts
	}
	return Progress{CampaignID: c.ID, Status: string(c.Status), AsOf: asOf.UTC().Format(time.RFC3339Nano),
		Counts: j.Counts, Sends: sendsOf(changed)}
}
