package campaignlambda

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// progressEvent is testdata/progress_stream.json: a batch of the
// campaign table's stream with task and campaign changes of c1..c4, a
// checkpoint, a send record, a task changed twice, a removal, a task
// insert and two records that do not decode.
func progressEvent(t *testing.T) events.DynamoDBEvent {
	t.Helper()
	b, err := os.ReadFile("testdata/progress_stream.json")
	if err != nil {
		t.Fatal(err)
	}
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestDecodeProgress(t *testing.T) {
	batches, bad := DecodeProgress(progressEvent(t).Records, campaigntable.StreamSendTask)
	type got struct {
		id, first string
		sends     []string
		campaigns []string
	}
	var gots []got
	for _, b := range batches {
		g := got{id: b.CampaignID, first: b.FirstSequence, campaigns: b.Changes.Campaigns}
		for _, s := range b.Changes.Sends {
			g.sends = append(g.sends, s.ID+"="+string(s.State))
		}
		gots = append(gots, g)
	}
	want := []got{
		{"c1", "100", []string{"c1-00000=Finished", "c1-00001=Finished"}, nil}, // the later change of c1-00000 wins
		{"c2", "103", nil, []string{"c2"}},
		{"c3", "108", []string{"c3-00000=Finished", "c3-00003=Pending"}, nil}, // 105 lacks its state; 111 is an insert (the mapping filters those out)
		{"c4", "109", nil, []string{"c4"}},
	}
	if !slices.EqualFunc(gots, want, func(a, b got) bool {
		return a.id == b.id && a.first == b.first && slices.Equal(a.sends, b.sends) && slices.Equal(a.campaigns, b.campaigns)
	}) {
		t.Errorf("DecodeProgress =\n %+v\nwant\n %+v", gots, want)
	}
	if len(bad) != 2 {
		t.Errorf("errors %v, want 2 (a task without its state, a record without the table's keys)", bad)
	}
}

// failing publishes, except to the channels it refuses; the store's
// Counts fails for countFails.
type failing struct {
	*memory.CampaignStore
	refuse     map[string]bool
	countFails string
	channels   []string
}

func (f *failing) Publish(_ context.Context, channel string, _ campaignapi.Progress) error {
	if f.refuse[channel] {
		return errors.New("AppSync Events: 503")
	}
	f.channels = append(f.channels, channel)
	return nil
}

func (f *failing) Counts(ctx context.Context, id string) (map[campaign.State]int, error) {
	if id == f.countFails {
		return nil, errors.New("throttled")
	}
	return f.CampaignStore.Counts(ctx, id)
}

func TestProgressHandle(t *testing.T) {
	tests := []struct {
		name       string
		refuse     []string
		countFails string
		published  []string
		failures   []string // sequence numbers reported
		timeLeft   time.Duration
	}{
		{"every campaign announced; c4 is gone, checkpoints and send records are not progress", nil, "",
			[]string{"/campaigns/u1/c1", "/campaigns/u2/c2", "/campaigns/u3/c3"}, nil, 0},
		{"a refused publish reports the campaign's first record", []string{"/campaigns/u2/c2"}, "",
			[]string{"/campaigns/u1/c1", "/campaigns/u3/c3"}, []string{"103"}, 0},
		{"a failed read too", nil, "c1", []string{"/campaigns/u2/c2", "/campaigns/u3/c3"}, []string{"100"}, 0},
		{"two failures: both reported (the stream retries from the lowest)", []string{"/campaigns/u3/c3"}, "c1",
			[]string{"/campaigns/u2/c2"}, []string{"100", "108"}, 0},
		{"out of time: the rest is reported from the first campaign left", nil, "", nil, []string{"100"}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := memory.NewCampaignStore()
			for _, c := range []campaign.Campaign{{ID: "c1", OwnerID: "u1", Status: campaign.Active, Total: 2},
				{ID: "c2", OwnerID: "u2", Status: campaign.CampaignCancelled, Total: 1}, {ID: "c3", OwnerID: "u3", Status: campaign.Active, Total: 2}} {
				st.PutCampaign(c)
			}
			f := &failing{CampaignStore: st, refuse: map[string]bool{}, countFails: tt.countFails}
			for _, c := range tt.refuse {
				f.refuse[c] = true
			}
			m := rec{}
			h := &Progress{Store: f, Publisher: f, Task: campaigntable.StreamSendTask, Metrics: m,
				Clock: clock.NewFake(time.Date(2026, 12, 1, 9, 0, 2, 0, time.UTC)), Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
			ctx := context.Background()
			if tt.timeLeft > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeLeft)
				defer cancel()
			}
			resp, err := h.Handle(ctx, progressEvent(t))
			if err != nil {
				t.Fatalf("Handle returned %v; failures must be batch item failures", err)
			}
			var failed []string
			for _, f := range resp.BatchItemFailures {
				failed = append(failed, f.ItemIdentifier)
			}
			if !slices.Equal(f.channels, tt.published) || !slices.Equal(failed, tt.failures) {
				t.Fatalf("published %v, failures %v; want %v, %v", f.channels, failed, tt.published, tt.failures)
			}
			announced := 4 - len(tt.failures)
			if tt.timeLeft > 0 {
				announced = 0
			}
			if m[campaignmetrics.CampaignProgressMalformed] != 2 || m[campaignmetrics.CampaignProgressErrors] != float64(len(tt.failures)) ||
				m[campaignmetrics.CampaignProgressAnnounced] != float64(announced) {
				t.Fatalf("metrics %v", m)
			}
		})
	}
}
