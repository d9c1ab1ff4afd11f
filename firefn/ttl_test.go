package firefn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/core/eventfilter"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/fire/firetest"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// streamRecord renders a REMOVE record of the marker whose image GetItem
// returned, as DynamoDB Streams hands it to Lambda. identity nil is a
// user's own delete (no userIdentity); the TTL process's deletions carry
// {"type":"Service","principalId":"dynamodb.amazonaws.com"}.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-streams.html
// dynalite serves no stream, so the records are built here from the
// marker's real image; the filter is the construct's own pattern
// (timerspec.TTLFilterPattern), evaluated by eventfilter.Match.
func streamRecord(t *testing.T, id string, image map[string]types.AttributeValue, ttl bool) json.RawMessage {
	t.Helper()
	img := map[string]map[string]string{}
	for k, v := range image {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			img[k] = map[string]string{"S": v.Value}
		case *types.AttributeValueMemberN:
			img[k] = map[string]string{"N": v.Value}
		default:
			t.Fatalf("attribute %s: unexpected type %T", k, v)
		}
	}
	r := map[string]any{
		"eventID": id, "eventName": "REMOVE", "eventVersion": "1.1", "eventSource": "aws:dynamodb", "awsRegion": "eu-west-1",
		"dynamodb": map[string]any{"ApproximateCreationDateTime": 1.8e9, "OldImage": img, "SequenceNumber": "1" + id,
			"SizeBytes": 120, "StreamViewType": "NEW_AND_OLD_IMAGES"},
		"eventSourceARN": "arn:aws:dynamodb:eu-west-1:111122223333:table/items/stream/2026-11-30T00:00:00.000",
	}
	if ttl {
		r["userIdentity"] = map[string]string{"type": timerspec.TTLIdentityType, "principalId": timerspec.TTLIdentityPrincipal}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The TTL timer end to end on dynalite: markers are real items; a cancel
// (the user's own delete) never fires its item, the TTL deletion fires
// its item once through the same firing core and target.
func TestTTLFilterDropsUserDeletesAndFiresTTLDeletes(t *testing.T) {
	endpoint := testenv.StartDynalite(t)
	db := testenv.DynamoClient(t, endpoint)
	s := firetest.ConsumerSchema()
	table := "items"
	testenv.CreateItemTable(t, db, table, s)
	ctx := context.Background()
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

	markers, err := ttlmarker.New(db, ttlmarker.Config{Table: table, Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	images := map[string]map[string]types.AttributeValue{}
	for _, job := range []string{"cancelled", "expired"} {
		k := contract.Key{Partition: "t1", Sort: job}
		item := map[string]types.AttributeValue{}
		for a, v := range s.Attrs(k) {
			item[a] = &types.AttributeValueMemberS{Value: v}
		}
		item[s.StateAttr] = &types.AttributeValueMemberS{Value: "Queued"}
		item[s.DueAttr] = &types.AttributeValueMemberS{Value: contract.FormatTime(due)}
		if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			t.Fatal(err)
		}
		sch := s.ScheduleFor(contract.Item{Key: k, Due: due})
		if err := markers.Arm(ctx, sch); err != nil {
			t.Fatal(err)
		}
		if err := markers.Arm(ctx, sch); err != nil {
			t.Fatalf("a retried create must succeed: %v", err)
		}
		mk := map[string]types.AttributeValue{}
		for a, v := range s.Attrs(timerspec.MarkerKey(s, sch.Name)) {
			mk[a] = &types.AttributeValueMemberS{Value: v}
		}
		got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: mk, ConsistentRead: aws.Bool(true)})
		if err != nil || got.Item == nil {
			t.Fatalf("marker of %s: %v %v", job, got, err)
		}
		if n := got.Item[timerspec.DefaultTTLAttr].(*types.AttributeValueMemberN).Value; n != fmt.Sprint(due.Unix()) {
			t.Fatalf("TTL %s, want the due time in epoch seconds %d", n, due.Unix())
		}
		images[job] = got.Item
	}
	// The user's cancel deletes its marker (a second cancel finds none).
	cancelled := s.ScheduleFor(contract.Item{Key: contract.Key{Partition: "t1", Sort: "cancelled"}, Due: due})
	if err := markers.Disarm(ctx, cancelled.Name, cancelled.At); err != nil {
		t.Fatal(err)
	}
	userDelete := streamRecord(t, "user", images["cancelled"], false)
	ttlDelete := streamRecord(t, "ttl", images["expired"], true)

	pattern := []byte(timerspec.TTLFilterPattern())
	for _, tc := range []struct {
		name string
		rec  json.RawMessage
		keep bool
	}{
		{"user's own delete is dropped", userDelete, false},
		{"TTL delete is kept", ttlDelete, true},
		{"TTL delete of a non-marker item is dropped", streamRecord(t, "x", map[string]types.AttributeValue{
			"tenantId": &types.AttributeValueMemberS{Value: "t1"}, "jobId": &types.AttributeValueMemberS{Value: "j"}}, true), false},
	} {
		got, err := eventfilter.Match(string(pattern), string(tc.rec))
		if err != nil || got != tc.keep {
			t.Fatalf("%s: filter kept %v (%v), want %v", tc.name, got, err, tc.keep)
		}
	}

	store, err := dynamo.NewItemStore(db, table, s)
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return due.Add(20 * time.Hour) } // a late TTL delete
	core, err := fire.New(fire.Config{Schema: s, Store: store, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var calls []contract.Payload
	target := fire.DeliverFunc(func(_ context.Context, p contract.Payload) error { calls = append(calls, p); return nil })
	var out bytes.Buffer
	h := &handler{firer: targetFirer{core: core, target: target}, now: now, log: slog.New(slog.DiscardHandler),
		metrics: metrics.New(metrics.FunctionExpiry, &out)}
	// Both records, as if the mapping had no filter: the function's own
	// check drops the user's delete too. The TTL record twice: a retried
	// batch delivers once.
	batch := json.RawMessage(`{"Records":[` + string(userDelete) + `,` + string(ttlDelete) + `,` + string(ttlDelete) + `]}`)
	resp, err := h.Invoke(ctx, batch)
	if err != nil || len(resp.(events.DynamoDBEventResponse).BatchItemFailures) != 0 {
		t.Fatalf("invoke: %v %+v", resp, err)
	}
	if len(calls) != 1 || calls[0].Key.Sort != "expired" || !calls[0].Due.Equal(due) {
		t.Fatalf("target calls %+v, want one for the expired item with its due time", calls)
	}
	for job, want := range map[string]string{"cancelled": "Queued", "expired": "Done"} {
		got, found, err := store.Get(ctx, contract.Key{Partition: "t1", Sort: job})
		if err != nil || !found || got.State != want {
			t.Fatalf("%s: state %q (%v %v), want %s", job, got.State, found, err, want)
		}
	}
	if !strings.Contains(out.String(), `"TTLDispatched":1`) {
		t.Fatalf("metrics %s lack TTLDispatched", out.String())
	}
}

// A failed firing of a TTL deletion is a batch item failure naming its
// record (the stream retries from it), and the records after it in the
// batch are left for that retry.
func TestTTLDispatchFailureIsABatchItemFailure(t *testing.T) {
	s := firetest.ConsumerSchema()
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	items := inmem.NewItems(s)
	var recs []string
	for _, job := range []string{"a", "b"} {
		k := contract.Key{Partition: "t1", Sort: job}
		a := s.Attrs(k)
		a[s.StateAttr], a[s.DueAttr] = "Queued", contract.FormatTime(due)
		if err := items.Put(a); err != nil {
			t.Fatal(err)
		}
		img := map[string]types.AttributeValue{timerspec.MarkerPayloadAttr: &types.AttributeValueMemberS{Value: s.EncodePayload(contract.Payload{Key: k, Due: due})}}
		recs = append(recs, string(streamRecord(t, "ev-"+job, img, true)))
	}
	now := func() time.Time { return due.Add(time.Hour) }
	core, err := fire.New(fire.Config{Schema: s, Store: items, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	var calls int
	target := fire.DeliverFunc(func(context.Context, contract.Payload) error { calls++; return errors.New("target down") })
	var out bytes.Buffer
	h := &handler{firer: targetFirer{core: core, target: target}, now: now, log: slog.New(slog.DiscardHandler),
		metrics: metrics.New(metrics.FunctionExpiry, &out)}
	resp, err := h.Invoke(context.Background(), json.RawMessage(`{"Records":[`+strings.Join(recs, ",")+`]}`))
	if err != nil {
		t.Fatal(err)
	}
	f := resp.(events.DynamoDBEventResponse).BatchItemFailures
	if len(f) != 1 || f[0].ItemIdentifier != "1ev-a" || calls != 1 {
		t.Fatalf("failures %+v after %d target calls; want ev-a's sequence number only, the batch stopped there", f, calls)
	}
	if !strings.Contains(out.String(), `"TTLDispatchFailed":1`) {
		t.Fatalf("metrics %s lack TTLDispatchFailed", out.String())
	}
}
