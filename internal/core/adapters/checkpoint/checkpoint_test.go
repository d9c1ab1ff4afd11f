package checkpoint

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func TestStoreOnDynalite(t *testing.T) {
	client := testenv.DynamoClient(t, testenv.StartDynalite(t))
	armed := armedindex.Spec{}.WithDefaults(timertest.Schema)
	testenv.CreateArmedItemTable(t, client, "tasks", timertest.Schema, armed)
	s, err := New(client, "tasks", timertest.Schema)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	t.Run("nothing saved loads the zero checkpoint", func(t *testing.T) {
		cp, err := s.Load(ctx)
		if err != nil || cp != (reconcile.Checkpoint{}) {
			t.Fatalf("Load = %+v, %v; want the zero checkpoint", cp, err)
		}
	})
	for _, want := range []reconcile.Checkpoint{
		{Phase: reconcile.PhaseTasks, Cursor: "eyJ1IjoiYSJ9", Offset: 7},
		{Phase: reconcile.PhaseSchedules, Cursor: "task-01JBQ", Offset: 0},
		{},
	} {
		t.Run("round trip "+string(want.Phase), func(t *testing.T) {
			if err := s.Save(ctx, want); err != nil {
				t.Fatal(err)
			}
			got, err := s.Load(ctx)
			if err != nil || got != want {
				t.Fatalf("Load = %+v, %v; want %+v", got, err, want)
			}
		})
	}
	t.Run("the item stays out of the armed index", func(t *testing.T) {
		if err := s.Save(ctx, reconcile.Checkpoint{Phase: reconcile.PhaseTasks, Offset: 1}); err != nil {
			t.Fatal(err)
		}
		out, err := client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("tasks"),
			IndexName: aws.String(armed.Name)})
		if err != nil {
			t.Fatal(err)
		}
		if out.Count != 0 {
			t.Errorf("armed index holds %d items, want 0", out.Count)
		}
	})
	t.Run("a damaged offset loads as a fresh pass", func(t *testing.T) {
		item := s.key()
		item[AttrPhase] = &types.AttributeValueMemberS{Value: "schedules"}
		item[AttrOffset] = &types.AttributeValueMemberS{Value: "minus one"}
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("tasks"), Item: item}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Load(ctx)
		if err != nil || got != (reconcile.Checkpoint{}) {
			t.Fatalf("Load = %+v, %v; want the zero checkpoint", got, err)
		}
	})
}

func TestIsReserved(t *testing.T) {
	for user, want := range map[string]bool{UserID: true, "3f2b7c1e-0000-4000-8000-000000000000": false, "": false} {
		if got := IsReserved(user); got != want {
			t.Errorf("IsReserved(%q) = %v, want %v", user, got, want)
		}
	}
}

func TestNewValidates(t *testing.T) {
	api := &dynamodb.Client{}
	for name, tc := range map[string]struct {
		api    API
		table  string
		schema contract.Schema
	}{
		"no client": {nil, "tasks", timertest.Schema},
		"no table":  {api, "", timertest.Schema},
		"no schema": {api, "tasks", contract.Schema{}},
	} {
		if _, err := New(tc.api, tc.table, tc.schema); err == nil {
			t.Errorf("%s: New succeeded", name)
		}
	}
}

// The checkpoint's key is the schema's: a table without a sort key gets
// a partition-only key, a table with one gets both.
func TestKeyFollowsSchema(t *testing.T) {
	for name, tc := range map[string]struct {
		schema contract.Schema
		want   []string
	}{
		"partition only":   {contract.Schema{PartitionKey: "id"}, []string{"id"}},
		"partition + sort": {contract.Schema{PartitionKey: "pk", SortKey: "sk"}, []string{"pk", "sk"}},
	} {
		s, err := New(&dynamodb.Client{}, "t", tc.schema)
		if err != nil {
			t.Fatal(err)
		}
		k := s.key()
		if len(k) != len(tc.want) {
			t.Fatalf("%s: key %v, want attributes %v", name, k, tc.want)
		}
		for _, a := range tc.want {
			if _, ok := k[a]; !ok {
				t.Errorf("%s: key %v lacks %s", name, k, a)
			}
		}
		k["extra"] = nil
		if _, ok := s.key()["extra"]; ok {
			t.Errorf("%s: key() shares its map between calls", name)
		}
	}
}
