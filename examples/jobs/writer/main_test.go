package main

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/examples/jobs/jobschema"
	"github.com/unschedule/unschedule/internal/testenv"
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
