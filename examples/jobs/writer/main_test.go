package main

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/examples/jobs/jobschema"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// TestWriterSpeaksTheContract runs the writer's plain DynamoDB calls
// against dynalite and reads each item back through the contract: a
// queued job is armed at its runAt, a moved one at the new time, a
// finished one is not armed, a deleted one is gone.
func TestWriterSpeaksTheContract(t *testing.T) {
	ctx := context.Background()
	db := testenv.DynamoClient(t, testenv.StartDynalite(t))
	s := func(v string) *string { return aws.String(v) }
	if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: s("jobs"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: s(jobschema.Tenant), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: s(jobschema.Job), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: s(jobschema.Tenant), KeyType: types.KeyTypeHash},
			{AttributeName: s(jobschema.Job), KeyType: types.KeyTypeRange},
		},
	}); err != nil {
		t.Fatal(err)
	}
	read := func() (map[string]string, bool) {
		out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: s("jobs"), ConsistentRead: aws.Bool(true),
			Key: key("acme", "j1")})
		if err != nil {
			t.Fatal(err)
		}
		if out.Item == nil {
			return nil, false
		}
		m := map[string]string{}
		for k, v := range out.Item {
			if sv, ok := v.(*types.AttributeValueMemberS); ok {
				m[k] = sv.Value
			}
		}
		return m, true
	}
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	checkFinishCancels(t, db, read, at)
	for _, step := range []struct {
		name      string
		do        func() error
		exists    bool
		armed     bool
		wantDueAt time.Time
	}{
		{"queue", func() error { return Queue(ctx, db, "jobs", "acme", "j1", at) }, true, true, at},
		{"move", func() error { return Queue(ctx, db, "jobs", "acme", "j1", at.Add(time.Hour)) }, true, true, at.Add(time.Hour)},
		{"finish", func() error { return Finish(ctx, db, "jobs", "acme", "j1") }, true, false, at.Add(time.Hour)},
		{"delete", func() error { return Delete(ctx, db, "jobs", "acme", "j1") }, false, false, time.Time{}},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		attrs, ok := read()
		if ok != step.exists {
			t.Fatalf("%s: item exists %v, want %v", step.name, ok, step.exists)
		}
		if !ok {
			continue
		}
		it, err := jobschema.Schema.ItemFrom(attrs)
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if jobschema.Schema.Armed(it) != step.armed || !it.Due.Equal(step.wantDueAt) {
			t.Fatalf("%s: armed %v due %v, want %v %v (item %v)", step.name, jobschema.Schema.Armed(it), it.Due, step.armed, step.wantDueAt, attrs)
		}
	}
}

// checkFinishCancels: Finish writes Done, which is also the claim's fired
// state. Read back from the table, the change is a cancel for the stream
// processor (not the claim: no claim mark), and no firing at or after
// runAt may take the job over and run its target.
func checkFinishCancels(t *testing.T, db *dynamodb.Client, read func() (map[string]string, bool), at time.Time) {
	t.Helper()
	ctx := context.Background()
	if err := Queue(ctx, db, "jobs", "acme", "j1", at); err != nil {
		t.Fatal(err)
	}
	before, _ := read()
	if err := Finish(ctx, db, "jobs", "acme", "j1"); err != nil {
		t.Fatal(err)
	}
	after, _ := read()
	image := func(a map[string]string) *contract.Item {
		it, err := jobschema.Schema.ItemFrom(a)
		if err != nil {
			t.Fatal(err)
		}
		return &it
	}
	k := contract.Key{Partition: "acme", Sort: "j1"}
	m, ok := cancel.Decide(jobschema.Schema, changefeed.Change{EventID: "e1", Kind: changefeed.Modify, Key: k,
		Old: image(before), New: image(after)})
	if !ok || m.Action != cancel.ActionCancel {
		t.Fatalf("Finish decided %+v (%v), want a cancel", m, ok)
	}
	store, err := dynamo.NewItemStore(db, "jobs", jobschema.Schema)
	if err != nil {
		t.Fatal(err)
	}
	for _, now := range []time.Time{at, at.Add(time.Hour)} {
		if err := store.TakeOver(ctx, contract.Payload{Key: k, Due: at}, now, fire.DefaultLease); !errors.Is(err, fire.ErrConditionFailed) {
			t.Fatalf("take over at %v of a job the writer finished: %v, want the condition to fail", now, err)
		}
	}
	if got, _ := read(); !reflect.DeepEqual(got, after) {
		t.Fatalf("the failed take-over changed the job: %v, want %v", got, after)
	}
}
