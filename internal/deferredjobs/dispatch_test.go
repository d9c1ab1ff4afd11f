package deferredjobs

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/deferredjobs"
	"github.com/unschedule/unschedule/deferredjobs/writer"
	"github.com/unschedule/unschedule/internal/eventfilter"
	"github.com/unschedule/unschedule/internal/testenv"
)

type fakeQueue struct {
	jobs []deferredjobs.Job
	fail map[string]bool
}

func (q *fakeQueue) Send(_ context.Context, j deferredjobs.Job) error {
	if q.fail[j.Tenant] {
		return errors.New("throttled")
	}
	q.jobs = append(q.jobs, j)
	return nil
}

type counts map[string]float64

func (c counts) Add(n string, v float64) { c[n] += v }

var names = Metrics{Queued: "Queued", Malformed: "Malformed", QueueFailed: "QueueFailed", Ignored: "Ignored"}

func newDispatcher(t *testing.T, q Queue, c counts) *Dispatcher {
	t.Helper()
	d, err := NewDispatcher(q, slog.New(slog.NewTextHandler(io.Discard, nil)), c, names)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// ttlIdentity is the userIdentity of a TTL deletion's stream record.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-streams.html
var ttlIdentity = &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}

func removeRecord(seq, tenant, window string, who *events.DynamoDBUserIdentity) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{
		EventID: seq, EventName: "REMOVE", EventSource: "aws:dynamodb", EventVersion: "1.1", AWSRegion: "eu-west-1",
		UserIdentity: who,
		Change: events.DynamoDBStreamRecord{
			SequenceNumber: seq, StreamViewType: "KEYS_ONLY", SizeBytes: 60,
			Keys: map[string]events.DynamoDBAttributeValue{
				deferredjobs.TenantAttr: events.NewStringAttribute(tenant),
				deferredjobs.WindowAttr: events.NewStringAttribute(window),
			},
		},
	}
}

func TestDispatch(t *testing.T) {
	const w = "2027-03-01T03:00:00Z"
	q := &fakeQueue{fail: map[string]bool{"busy": true}}
	c := counts{}
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		removeRecord("1", "shop-1", w, ttlIdentity),
		removeRecord("2", "shop-2", w, nil),                                                             // a user's delete
		removeRecord("3", "shop-3", w, &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "x"}), // another service
		removeRecord("4", "", w, ttlIdentity),                                                           // no tenant
		removeRecord("5", "shop-5", "not-a-time", ttlIdentity),
		removeRecord("6", "busy", w, ttlIdentity),
		{EventName: "INSERT", UserIdentity: ttlIdentity},
	}}
	resp, err := newDispatcher(t, q, c).Handle(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.jobs) != 1 || q.jobs[0].Tenant != "shop-1" || q.jobs[0].Window.Format(time.RFC3339) != w {
		t.Fatalf("jobs %+v", q.jobs)
	}
	if len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "6" {
		t.Fatalf("failures %+v", resp.BatchItemFailures)
	}
	want := counts{"Queued": 1, "Ignored": 3, "Malformed": 2, "QueueFailed": 1}
	for k, v := range want {
		if c[k] != v {
			t.Fatalf("metrics %v, want %v", c, want)
		}
	}
}

// TestTTLFilterAgainstDynalite: markers are written to dynalite by the
// public Writer; one expires and is deleted as TTL deletes it, another is
// deleted by a user. What the test proves, and what it does not:
//
//   - AWS enforces the filter: Lambda's event source mapping drops every
//     record that does not match FilterCriteria before the function runs
//     (https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html),
//     and DynamoDB Streams marks a TTL deletion with userIdentity
//     {"type":"Service","principalId":"dynamodb.amazonaws.com"}; a user's
//     delete carries no userIdentity
//     (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-streams.html).
//   - dynalite implements neither DynamoDB Streams (no GetRecords) nor the
//     TTL sweeper (no UpdateTimeToLive), so the test builds each REMOVE
//     record as DynamoDB Streams delivers it, from the keys of the item it
//     actually deleted in dynalite, with the identity above for the TTL
//     deletion and none for the user's.
//   - The test evaluates the very pattern the construct synthesizes
//     (deferredjobs.TTLDeleteFilterJSON; the synth test pins the template's Pattern to
//     it) with eventfilter.Match, a matcher of Lambda's pattern syntax that
//     errors on any operator it does not implement; it proves the pattern
//     keeps the TTL deletion and drops the user's, and that the dispatcher
//     queues one job for the former only (also without the filter).
func TestTTLFilterAgainstDynalite(t *testing.T) {
	ctx := context.Background()
	db := testenv.DynamoClient(t, testenv.StartDynalite(t))
	table := "markers"
	if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(table),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(deferredjobs.TenantAttr), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(deferredjobs.WindowAttr), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(deferredjobs.TenantAttr), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(deferredjobs.WindowAttr), KeyType: types.KeyTypeRange},
		},
	}); err != nil {
		t.Fatal(err)
	}
	wed := time.Date(2027, 3, 3, 12, 0, 0, 0, time.UTC)
	w, err := writer.New(db, table, deferredjobs.DefaultWeekly)
	if err != nil {
		t.Fatal(err)
	}
	w = w.WithClock(func() time.Time { return wed })
	for _, tenant := range []string{"shop-ttl", "shop-user", "shop-ttl"} { // shop-ttl twice: one marker
		if _, err := w.MarkActivity(ctx, tenant); err != nil {
			t.Fatal(err)
		}
	}
	scan, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Items) != 2 {
		t.Fatalf("want one marker per tenant, got %d items", len(scan.Items))
	}

	// After the window: TTL deletes shop-ttl's expired marker; the user
	// deletes shop-user's.
	after := time.Date(2027, 3, 8, 5, 0, 0, 0, time.UTC)
	var records []events.DynamoDBEventRecord
	for i, item := range scan.Items {
		tenant := item[deferredjobs.TenantAttr].(*types.AttributeValueMemberS).Value
		window := item[deferredjobs.WindowAttr].(*types.AttributeValueMemberS).Value
		exp, _ := strconv.ParseInt(item[deferredjobs.ExpiresAttr].(*types.AttributeValueMemberN).Value, 10, 64)
		if exp > after.Unix() {
			t.Fatalf("marker %s expires %d, after the window", tenant, exp)
		}
		old, err := db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(table), ReturnValues: types.ReturnValueAllOld,
			Key: map[string]types.AttributeValue{deferredjobs.TenantAttr: item[deferredjobs.TenantAttr], deferredjobs.WindowAttr: item[deferredjobs.WindowAttr]},
		})
		if err != nil || len(old.Attributes) == 0 {
			t.Fatalf("delete %s: %v", tenant, err)
		}
		var who *events.DynamoDBUserIdentity
		if tenant == "shop-ttl" {
			who = ttlIdentity
		}
		records = append(records, removeRecord(strconv.Itoa(i+1), tenant, window, who))
	}

	var delivered []events.DynamoDBEventRecord
	for _, r := range records {
		b, _ := json.Marshal(r)
		ok, err := eventfilter.Match(deferredjobs.TTLDeleteFilterJSON(), string(b))
		if err != nil {
			t.Fatal(err)
		}
		tenant := r.Change.Keys[deferredjobs.TenantAttr].String()
		if ok != (tenant == "shop-ttl") {
			t.Fatalf("filter on %s's delete = %v: the filter must keep TTL deletes and drop a user's", tenant, ok)
		}
		if ok {
			delivered = append(delivered, r)
		}
	}
	for name, in := range map[string][]events.DynamoDBEventRecord{"filtered": delivered, "unfiltered": records} {
		q := &fakeQueue{}
		if _, err := newDispatcher(t, q, counts{}).Handle(ctx, events.DynamoDBEvent{Records: in}); err != nil {
			t.Fatal(err)
		}
		if len(q.jobs) != 1 || q.jobs[0].Tenant != "shop-ttl" || !q.jobs[0].Window.Equal(time.Date(2027, 3, 8, 3, 0, 0, 0, time.UTC)) {
			t.Fatalf("%s: jobs %+v", name, q.jobs)
		}
	}
}

func TestTTLDeleteFilterJSON(t *testing.T) {
	want := `{"eventName":["REMOVE"],"userIdentity":{"principalId":["dynamodb.amazonaws.com"],"type":["Service"]}}`
	if got := deferredjobs.TTLDeleteFilterJSON(); got != want {
		t.Fatalf("got %s", got)
	}
}
