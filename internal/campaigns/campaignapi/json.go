package campaignapi

import (
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
)

// sendJSON is one send task as the API shows it.
type sendJSON struct {
	ID      string `json:"id"`
	Index   int    `json:"index"`
	Email   string `json:"email"`
	Subject string `json:"subject"`
	State   string `json:"state"`
	SendAt  string `json:"sendAt"`
	// Local is the send time in the campaign's zone.
	Local   string `json:"local"`
	Attempt int    `json:"attempt,omitempty"`
	SentAt  string `json:"sentAt,omitempty"`
	Error   string `json:"error,omitempty"`
	Reason  string `json:"reason,omitempty"`
}

type campaignJSON struct {
	ID           string         `json:"id"`
	Status       string         `json:"status"`
	Subject      string         `json:"subject"`
	TimeZone     string         `json:"timeZone"`
	Total        int            `json:"total"`
	CreatedAt    string         `json:"createdAt"`
	UpdatedAt    string         `json:"updatedAt"`
	CancelReason string         `json:"cancelReason,omitempty"`
	Counts       map[string]int `json:"counts,omitempty"`
	Sends        []sendJSON     `json:"sends,omitempty"`
	// Cursor reads the next page of sends (GET ?cursor=); absent at the end.
	Cursor string `json:"cursor,omitempty"`
}

// summaryJSON is one campaign of the list: what the owner index
// projects (tablekeys.OwnerProjection). The zone, the counts and the
// sends are in GET /campaigns/{id}; a summary leaves them out rather
// than show an empty zone.
type summaryJSON struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	Subject   string `json:"subject"`
	Total     int    `json:"total"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
}

func summaryOf(c campaign.Campaign) summaryJSON {
	return summaryJSON{ID: c.ID, Status: string(c.Status), Subject: c.Subject, Total: c.Total,
		CreatedAt: stamp(c.CreatedAt), UpdatedAt: stamp(c.UpdatedAt)}
}

// cancelJSON counts what one cancel did: a repeated cancel, or one of a
// Draft (no schedules yet), cancels 0 and deletes 0.
type cancelJSON struct {
	ID               string `json:"id"`
	Status           string `json:"status"`
	Cancelled        int    `json:"cancelled"`
	SchedulesDeleted int    `json:"schedulesDeleted"`
	// Done is false when the cancel stopped at its deadline (a 202): the
	// reconciler cancels the rest.
	Done bool `json:"done"`
}

type previewJSON struct {
	Total int        `json:"total"`
	First string     `json:"first"`
	Last  string     `json:"last"`
	Days  int        `json:"days"`
	Sends []sendJSON `json:"sends"`
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func sendOf(t campaign.SendTask) sendJSON {
	return sendJSON{ID: t.ID, Index: t.Index, Email: t.Email, Subject: t.Subject, State: string(t.State),
		SendAt: stamp(t.SendAt), Local: t.Local, Attempt: t.Attempt, SentAt: stamp(t.SentAt), Error: t.Error, Reason: t.Reason}
}

func sendsOf(ts []campaign.SendTask) []sendJSON {
	out := make([]sendJSON, len(ts))
	for i, t := range ts {
		out[i] = sendOf(t)
	}
	return out
}

// SendStates are every state a send task can be in, in the order a
// campaign's counts list them: every one is present (0 when none), so a
// client need not know which states exist to show them.
var SendStates = []campaign.State{campaign.Pending, campaign.Running, campaign.Finished, campaign.Failed,
	campaign.Cancelled, campaign.Suppressed}

func countsOf(ts []campaign.SendTask) map[campaign.State]int {
	m := map[campaign.State]int{}
	for _, t := range ts {
		m[t.State]++
	}
	return m
}

// campaignOf shows c with counts (nil: left out) and a page of sends;
// the caller seals the next page's cursor.
func campaignOf(c campaign.Campaign, counts map[campaign.State]int, page []campaign.SendTask) campaignJSON {
	out := campaignJSON{ID: c.ID, Status: string(c.Status), Subject: c.Subject, TimeZone: c.Rules.TimeZone, Total: c.Total,
		CreatedAt: stamp(c.CreatedAt), UpdatedAt: stamp(c.UpdatedAt), CancelReason: c.CancelReason, Sends: sendsOf(page)}
	if counts != nil {
		out.Counts = map[string]int{}
		for _, s := range SendStates {
			out.Counts[string(s)] = counts[s]
		}
	}
	return out
}

func previewOf(c campaign.Campaign, ts []campaign.SendTask) previewJSON {
	days := map[string]bool{}
	for _, t := range ts {
		days[t.Local[:10]] = true
	}
	return previewJSON{Total: len(ts), First: ts[0].Local, Last: ts[len(ts)-1].Local, Days: len(days),
		Sends: sendsOf(ts[:min(len(ts), PreviewSends)])}
}
