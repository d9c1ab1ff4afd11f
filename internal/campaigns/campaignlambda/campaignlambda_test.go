package campaignlambda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

type rec map[string]float64

func (r rec) Add(name string, n float64) { r[name] += n }
func (r rec) Flush() error               { return nil }

type starts []string

func (s *starts) Start(_ context.Context, id string) error {
	*s = append(*s, id)
	if id == "fail" {
		return errors.New("invoke refused")
	}
	return nil
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// world is one campaign of n tasks in memory, its clock at now.
func world(t *testing.T, id string, n int, now time.Time) (*memory.CampaignStore, *clock.Fake, []campaign.SendTask) {
	t.Helper()
	st := memory.NewCampaignStore()
	var rs []campaign.Recipient
	for i := range n {
		rs = append(rs, campaign.Recipient{Email: fmt.Sprintf("r%d@example.com", i)})
	}
	loc, _ := time.LoadLocation("Europe/Berlin")
	day := now.In(loc)
	c, tasks, err := campaign.Build(id, "u1", campaign.Request{Subject: "s", Body: "b", Recipients: rs, Rules: plan.Rules{
		SendsPerDay: 1440, Weekdays: []time.Weekday{0, 1, 2, 3, 4, 5, 6}, Windows: []plan.Window{{Start: 0, End: 24 * 60}},
		TimeZone: "Europe/Berlin", Start: plan.Date{Year: day.Year(), Month: day.Month(), Day: day.Day()}}}, now, nil)
	if err != nil {
		t.Fatal(err)
	}
	st.PutCampaign(c)
	st.PutTasks(tasks...)
	return st, clock.NewFake(now), tasks
}

func TestProvisionReinvokesItselfAtItsTimeLimit(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name      string
		id        string
		budget    time.Duration // the context's deadline from now
		wantErr   bool
		wantStart int
		metric    string
	}{
		{"done in one run", "c1", time.Hour, false, 0, campaignmetrics.CampaignSchedulesCreated},
		{"stops at the margin and re-invokes", "c1", time.Minute, false, 1, campaignmetrics.CampaignProvisionContinued},
		{"a failed re-invoke is an error (Lambda retries from the checkpoint)", "fail", time.Minute, true, 1, campaignmetrics.CampaignProvisionErrors},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st, clock, _ := world(t, tc.id, 5, now)
			p, err := provision.New(provision.Config{Seed: 1}, st, st, memory.NewCampaignSenders("u1"), inmem.NewRemote(inmem.NewScheduler(), nil), memory.NewCampaignCheckpoints(), clock)
			if err != nil {
				t.Fatal(err)
			}
			self, m := &starts{}, rec{}
			h := &Provision{Provisioner: p, Self: self, Metrics: m, Log: quiet}
			ctx, cancel := context.WithDeadline(context.Background(), now.Add(tc.budget))
			defer cancel()
			err = h.Handle(ctx, ProvisionEvent{CampaignID: tc.id})
			if (err != nil) != tc.wantErr || len(*self) != tc.wantStart || m[tc.metric] == 0 {
				t.Fatalf("err %v, starts %v, metrics %v", err, *self, m)
			}
		})
	}
	t.Run("an event without an id is dropped with a metric", func(t *testing.T) {
		m := rec{}
		if err := (&Provision{Metrics: m, Log: quiet}).Handle(context.Background(), ProvisionEvent{}); err != nil || m[campaignmetrics.CampaignProvisionErrors] != 1 {
			t.Fatalf("%v %v", err, m)
		}
	})
}

func TestSendHandler(t *testing.T) {
	now := time.Now()
	st, clock, tasks := world(t, "c1", 4, now)
	clock.Set(tasks[3].SendAt)
	if err := st.SetStatus(context.Background(), "c1", []campaign.Status{campaign.Draft}, campaign.Active, "", now); err != nil {
		t.Fatal(err)
	}
	w, _ := send.New(st, st, memory.NewCampaignSender(clock), memory.NewCampaignSenders("u1"), clock, 0)
	m := rec{}
	h := &Send{Worker: w, Metrics: m, Log: quiet}
	payload := func(i int) string { return campaign.TaskSchema.EncodePayload(tasks[i].Payload()) }
	// A TTL deletion of task 2's marker, as the stream hands it over; a
	// user's delete and an insert in the same batch are not fires.
	ttl := func(i int, seq, event, principal string) map[string]any {
		return map[string]any{"eventSource": "aws:dynamodb", "eventName": event,
			"userIdentity": map[string]any{"type": "Service", "principalId": principal},
			"dynamodb": map[string]any{"SequenceNumber": seq, "OldImage": map[string]any{
				timerspec.MarkerPayloadAttr: map[string]any{"S": payload(i)}}}}
	}
	batch, _ := json.Marshal(map[string]any{"Records": []any{
		ttl(3, "1", "REMOVE", "someone"), ttl(2, "2", "REMOVE", "dynamodb.amazonaws.com"), ttl(3, "3", "INSERT", "dynamodb.amazonaws.com")}})
	for _, in := range []string{
		`{"campaignId":"c1","taskId":"c1-00000"}`, `{"campaignId":"c1","taskId":"c1-00000"}`, // the older event
		payload(1), // a schedule's or an execution's payload
		string(batch),
		`{"taskId":1}`, `not json`,
	} {
		resp, err := h.Invoke(context.Background(), []byte(in))
		if r, ok := resp.(events.DynamoDBEventResponse); err != nil || (ok && len(r.BatchItemFailures) != 0) {
			t.Fatalf("%s: %v %v", in, resp, err)
		}
	}
	if m[campaignmetrics.CampaignSendsSent] != 3 || m[campaignmetrics.CampaignSendsSkipped] != 1 || m[campaignmetrics.CampaignSendBadInput] != 2 {
		t.Fatalf("metrics %v", m)
	}
	for i, want := range []campaign.State{campaign.Finished, campaign.Finished, campaign.Finished, campaign.Pending} {
		if got, _ := st.Get(context.Background(), tasks[i].Key()); got.State != want {
			t.Fatalf("task %d %s, want %s", i, got.State, want)
		}
	}
}

func TestAPIHandlerCountsServerErrorsOnly(t *testing.T) {
	m := rec{}
	a := &API{Handler: &campaignapi.Handler{}, Metrics: m, Log: quiet} // the 400 never reaches the handler
	resp, err := a.Handle(context.Background(), events.APIGatewayProxyRequest{Body: "%%", IsBase64Encoded: true})
	if err != nil || resp.StatusCode != 400 || m[campaignmetrics.CampaignApiServerErrors] != 0 {
		t.Fatalf("%+v %v %v", resp, err, m)
	}
}

type nopDispatch struct{}

func (nopDispatch) Dispatch(context.Context, campaign.FireEvent) error { return nil }
