package campaignapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/campaigncancel"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo/dynamotest"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/httpapi"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// runNow is a Starter that runs provisioning at once (the async invoke).
type runNow struct {
	p     *provision.Provisioner
	clock campaign.Clock
}

func (r runNow) Start(ctx context.Context, id string) error {
	_, err := r.p.Run(ctx, id, r.clock.Now().Add(15*time.Minute))
	return err
}

// TestWholeCampaignOnDynalite drives one campaign through the API, the
// provisioning, every schedule's fire (twice: a duplicate) and the send
// worker, all over the DynamoDB store, and reads the counts back.
func TestWholeCampaignOnDynalite(t *testing.T) {
	ctx := context.Background()
	client := testenv.NewDynamoClient(dynalite)
	name := fmt.Sprintf("campaigns-e2e-%d", time.Now().UnixNano())
	dynamotest.CreateTable(t, client, campaigntable.CampaignTableInput(name))
	st, _ := campaigntable.NewCampaignStore(client, name)
	clock := clock.NewFake(now)
	sched := inmem.NewScheduler()
	p, _ := provision.New(provision.Config{Seed: 1}, st, st, memory.NewCampaignSenders("u1"), sched, st, clock)
	c, _ := campaigncancel.New(st, st, sched, clock, 1)
	h, err := campaignapi.New(st, pagecursor.NewRandom(), runNow{p, clock}, c, clock, nil, nil, campaignapi.DefaultSenderGroup, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	call := func(method, route, id string) map[string]any {
		resp := h.Serve(ctx, httpapi.Request{Method: method, Route: route, ID: id, UserID: "u1", Groups: []string{campaignapi.DefaultSenderGroup}, EmailVerified: true, Email: "ada@example.com", EmailProof: "ada@example.com", Body: []byte(body(7, okSchedule))})
		var out map[string]any
		_ = json.Unmarshal(resp.Body, &out)
		if resp.Status >= 300 {
			t.Fatalf("%s %s: %d %v", method, route, resp.Status, out)
		}
		return out
	}
	id := call("POST", campaignapi.RouteCampaigns, "")["id"].(string)
	call("POST", campaignapi.RouteProvision, id)
	fires := sched.All()
	if len(fires) != 7 {
		t.Fatalf("%d schedules, want 7", len(fires))
	}
	sort.Slice(fires, func(i, j int) bool { return fires[i].At.Before(fires[j].At) })
	outbox := memory.NewCampaignSender(clock)
	w, _ := send.New(st, st, outbox, memory.NewCampaignSenders("u1"), clock, 0)
	for _, r := range fires {
		clock.Set(r.At)
		e, err := campaign.DecodeFire([]byte(campaign.TaskSchema.EncodePayload(r.Payload)))
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // a duplicate fire sends nothing more
			if _, err := w.Handle(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := call("GET", campaignapi.RouteCampaign, id)
	counts := got["counts"].(map[string]any)
	if got["status"] != "Completed" || counts["Finished"] != 7.0 || counts["Pending"] != 0.0 {
		t.Fatalf("campaign %v", got)
	}
	for _, s := range got["sends"].([]any) {
		if outbox.Count("send-"+s.(map[string]any)["id"].(string)) != 1 {
			t.Fatalf("send %v not sent exactly once", s)
		}
	}
}
