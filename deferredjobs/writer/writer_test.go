package writer_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/deferredjobs/writer"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// TestMarkActivityAgainstDynalite: on a table keyed as the construct's,
// many activities of a tenant in one window create one armed item, due at
// the window; an item the core already claimed (Fired) is not re-armed by
// a late activity of the same window; a write DynamoDB refuses otherwise
// is an error.
func TestMarkActivityAgainstDynalite(t *testing.T) {
	ctx := context.Background()
	db := testenv.DynamoClient(t, testenv.StartDynalite(t))
	const table = "jobs"
	if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(table),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(job.TenantAttr), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String(job.WindowAttr), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(job.TenantAttr), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(job.WindowAttr), KeyType: types.KeyTypeRange},
		},
	}); err != nil {
		t.Fatal(err)
	}
	wed := time.Date(2027, 3, 3, 12, 0, 0, 0, time.UTC)
	window := time.Date(2027, 3, 8, 3, 0, 0, 0, time.UTC)
	w, err := writer.New(db, table, job.DefaultWeekly)
	if err != nil {
		t.Fatal(err)
	}
	for i, tenant := range []string{"shop-1", "shop-2", "shop-1", "shop-1"} {
		at := wed.Add(time.Duration(i) * time.Hour)
		it, err := w.WithClock(func() time.Time { return at }).MarkActivity(ctx, tenant)
		if err != nil || !it.Window.Equal(window) {
			t.Fatalf("MarkActivity(%s) = %+v, %v", tenant, it, err)
		}
	}
	scan, err := db.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(table)})
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Items) != 2 {
		t.Fatalf("want one item per tenant and window, got %d", len(scan.Items))
	}
	for _, item := range scan.Items {
		for attr, want := range map[string]string{job.WindowAttr: "2027-03-08T03:00:00Z", job.DueAttr: "2027-03-08T03:00:00Z", job.StateAttr: job.PendingState} {
			if v, _ := item[attr].(*types.AttributeValueMemberS); v == nil || v.Value != want {
				t.Fatalf("%s = %v, want %q", attr, item[attr], want)
			}
		}
	}

	// The core claimed shop-1's item; a late activity of the same window
	// must leave it fired.
	key := map[string]types.AttributeValue{
		job.TenantAttr: &types.AttributeValueMemberS{Value: "shop-1"}, job.WindowAttr: &types.AttributeValueMemberS{Value: "2027-03-08T03:00:00Z"}}
	if _, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key,
		UpdateExpression:          aws.String("SET #s = :f"),
		ExpressionAttributeNames:  map[string]string{"#s": job.StateAttr},
		ExpressionAttributeValues: map[string]types.AttributeValue{":f": &types.AttributeValueMemberS{Value: job.FiredState}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WithClock(func() time.Time { return window.Add(-time.Second) }).MarkActivity(ctx, "shop-1"); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Item[job.StateAttr].(*types.AttributeValueMemberS).Value; s != job.FiredState {
		t.Fatalf("a late activity re-armed a fired item: status %s", s)
	}

	other, _ := writer.New(db, "no-such-table", job.DefaultWeekly)
	if _, err := other.MarkActivity(ctx, "shop-1"); err == nil {
		t.Fatal("a write to a missing table must fail")
	}
	if _, err := w.MarkActivity(ctx, " "); !errors.Is(err, job.ErrInvalid) {
		t.Fatalf("empty tenant: %v", err)
	}
}

func TestNewAndFromEnv(t *testing.T) {
	if _, err := writer.New(nil, "t", job.DefaultWeekly); !errors.Is(err, job.ErrInvalid) {
		t.Fatal(err)
	}
	t.Setenv(job.EnvTable, "jobs")
	t.Setenv(job.EnvWeekly, "funday 03:00")
	if _, err := writer.FromEnv(&dynamodb.Client{}); !errors.Is(err, job.ErrInvalid) {
		t.Fatalf("a bad weekly time: %v", err)
	}
	t.Setenv(job.EnvWeekly, "SUNDAY 23:30")
	if _, err := writer.FromEnv(&dynamodb.Client{}); err != nil {
		t.Fatal(err)
	}
}
