package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo/dynamotest"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

var dynalite string

func TestMain(m *testing.M) { os.Exit(testenv.RunWithDynalite(m, &dynalite)) }

// TestHandlerOnDynalite wires the function as main does (the table
// adapter on dynalite, the AppSync Events publisher on a TLS test
// server), sends a stream batch with one finished send and checks what
// was published: on the owner's channel, the counts read from the table
// after the change, signed for appsync; a refused publish is a batch item
// failure.
func TestHandlerOnDynalite(t *testing.T) {
	ctx := context.Background()
	client := testenv.NewDynamoClient(dynalite)
	table := fmt.Sprintf("campaigns-%d", time.Now().UnixNano())
	dynamotest.CreateTable(t, client, campaigntable.CampaignTableInput(table))
	store, err := campaigntable.NewCampaignStore(client, table)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	c, tasks, err := campaign.Build("c1", "owner-1", campaign.Request{Subject: "Hello", Body: "Hi",
		Rules: plan.Rules{SendsPerDay: 20, Windows: []plan.Window{{Start: 9 * 60, End: 17 * 60}}, TimeZone: "Europe/Berlin",
			Start: plan.Date{Year: 2026, Month: time.December, Day: 1}},
		Recipients: []campaign.Recipient{{Email: "a@example.com"}, {Email: "b@example.com"}, {Email: "c@example.com"}}}, start, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Create(ctx, c, tasks); err != nil {
		t.Fatal(err)
	}
	claimed, err := store.Claim(ctx, tasks[0].Key(), tasks[0].SendAt, start, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	done, err := campaign.Finish(claimed, start.Add(time.Second), "m-1", start.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Replace(ctx, claimed, done); err != nil {
		t.Fatal(err)
	}
	// The stream record of that write (NEW_IMAGE), as Lambda delivers it.
	image := fmt.Sprintf(`{"pk":{"S":"C#c1"},"sk":{"S":"T#%[1]s"},"campaignId":{"S":"c1"},"taskId":{"S":"%[1]s"},"index":{"N":"0"},`+
		`"state":{"S":"Finished"},"attempt":{"N":"1"},"email":{"S":"a@example.com"},"sentAt":{"S":"%[2]s"},"messageId":{"S":"m-1"}}`,
		done.ID, done.SentAt.Format(time.RFC3339Nano))
	var ev events.DynamoDBEvent
	raw := `{"Records":[{"eventID":"e1","eventName":"MODIFY","dynamodb":{"SequenceNumber":"4200","Keys":{"pk":{"S":"C#c1"},"sk":{"S":"T#` +
		done.ID + `"}},"NewImage":` + image + `}}]}`
	if err := json.Unmarshal([]byte(raw), &ev); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name     string
		status   int
		failures int
	}{{"published", http.StatusOK, 0}, {"refused: a batch item failure", http.StatusUnauthorized, 1}} {
		t.Run(tc.name, func(t *testing.T) {
			var body []byte
			var auth string
			srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ = io.ReadAll(r.Body)
				auth = r.Header.Get("Authorization")
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			h, err := newHandler(client, table, strings.TrimPrefix(srv.URL, "https://"), "eu-central-1",
				credentials.NewStaticCredentialsProvider("AKID", "secret", ""), srv.Client(), slog.New(slog.NewJSONHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := h.Handle(ctx, ev)
			if err != nil || len(resp.BatchItemFailures) != tc.failures || (tc.failures > 0 && resp.BatchItemFailures[0].ItemIdentifier != "4200") {
				t.Fatalf("Handle = %+v, %v; want %d failures (sequence 4200)", resp, err, tc.failures)
			}
			var req struct {
				Channel string   `json:"channel"`
				Events  []string `json:"events"`
			}
			if err := json.Unmarshal(body, &req); err != nil || len(req.Events) != 1 {
				t.Fatalf("published %s (%v)", body, err)
			}
			var p campaignapi.Progress
			if err := json.Unmarshal([]byte(req.Events[0]), &p); err != nil {
				t.Fatal(err)
			}
			if req.Channel != "/campaigns/owner-1/c1" || p.CampaignID != "c1" || p.Counts["Finished"] != 1 || p.Counts["Pending"] != 2 ||
				len(p.Sends) != 1 || !strings.Contains(auth, "/eu-central-1/appsync/aws4_request") {
				t.Errorf("published %s on %s (auth %q): want c1's counts (1 Finished, 2 Pending) and its finished send, signed for appsync",
					req.Events[0], req.Channel, auth)
			}
		})
	}
}
