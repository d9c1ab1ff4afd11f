package tasktable

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/todo/todotest"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// One dynalite for the package; each test gets its own table.
var (
	endpoint string
	tables   atomic.Int64
)

// TestMain runs the package's tests on dynalite; without it they are
// skipped, except under CI=true (testenv.RunWithDynalite).
func TestMain(m *testing.M) { os.Exit(testenv.RunWithDynalite(m, &endpoint)) }

// newTable creates an empty task table and returns a client and its name.
func newTable(t *testing.T) (*dynamodb.Client, string) {
	t.Helper()
	c := testenv.DynamoClient(t, endpoint)
	name := "tasks-" + strconv.FormatInt(tables.Add(1), 10)
	todotest.CreateTaskTable(t, c, name)
	return c, name
}

func newStore(t *testing.T) *Store {
	c, name := newTable(t)
	return New(c, name)
}

func TestStoreContract(t *testing.T) {
	todotest.StoreContract(t, func(t *testing.T) todotest.ContractStore { return newStore(t) })
}

// rawItem reads an item as stored, bypassing the codec.
func rawItem(t *testing.T, c *dynamodb.Client, table, user, id string) map[string]types.AttributeValue {
	t.Helper()
	out, err := c.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(table), Key: key(user, id), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// TestPendingShardFollowsAwaitsExpiry: the item is in the pending index
// while the task is Pending or Expired without a recorded notification.
func TestPendingShardFollowsAwaitsExpiry(t *testing.T) {
	ctx := context.Background()
	c, table := newTable(t)
	s := New(c, table)
	now := todotest.ContractTask("u", 0).DueAt
	for _, tc := range []struct {
		name  string
		leave func(x task.Task) error
		want  bool
	}{
		{"still pending after an edit", func(x task.Task) error {
			title := "edited"
			_, err := s.UpdatePending(ctx, x.UserID, x.TaskID, task.Patch{Title: &title}, now)
			return err
		}, true},
		{"completed", func(x task.Task) error {
			_, err := s.UpdatePending(ctx, x.UserID, x.TaskID, task.Patch{Complete: true}, now)
			return err
		}, false},
		{"expired, not notified", func(x task.Task) error {
			_, err := s.Expire(ctx, x.UserID, x.TaskID, x.DueAt, now)
			return err
		}, true},
		{"expired, claimed again", func(x task.Task) error {
			// Claimed at the deadline, as a firing does: a take-over needs
			// that claim mark.
			if _, err := s.Expire(ctx, x.UserID, x.TaskID, x.DueAt, x.DueAt); err != nil {
				return err
			}
			return s.ClaimNotification(ctx, x.UserID, x.TaskID, x.DueAt, x.DueAt.Add(time.Hour), time.Minute)
		}, true},
		{"expired and notified", func(x task.Task) error {
			if _, err := s.Expire(ctx, x.UserID, x.TaskID, x.DueAt, now); err != nil {
				return err
			}
			return s.MarkNotified(ctx, x.UserID, x.TaskID, now)
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := todotest.ContractTask("u-"+tc.name, 1)
			if err := s.Create(ctx, x); err != nil {
				t.Fatal(err)
			}
			if err := tc.leave(x); err != nil {
				t.Fatal(err)
			}
			item := rawItem(t, c, table, x.UserID, x.TaskID)
			sh, ok := item[tableschema.PendingShardAttr]
			if ok != tc.want {
				t.Fatalf("pendingShard present = %v, want %v (item %v)", ok, tc.want, item)
			}
			if ok && sh.(*types.AttributeValueMemberS).Value != tableschema.PendingShard(x.TaskID) {
				t.Fatalf("pendingShard = %v, want %s", sh, tableschema.PendingShard(x.TaskID))
			}
		})
	}
}

func TestListCapsThePageAtMaxPageSize(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	for n := 0; n < task.MaxPageSize+5; n++ {
		if err := s.Create(ctx, todotest.ContractTask("u", n)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		limit   int
		want    int
		wantCur bool
	}{
		{"above the cap", task.MaxPageSize + 50, task.MaxPageSize, true},
		{"default", 0, task.DefaultPageSize, true},
		{"everything fits", 200, task.MaxPageSize, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.List(ctx, "u", task.PageRequest{Limit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Tasks) != tc.want || (p.Cursor != "") != tc.wantCur {
				t.Fatalf("got %d tasks, cursor %q; want %d, cursor %v", len(p.Tasks), p.Cursor, tc.want, tc.wantCur)
			}
		})
	}
}

func TestListPendingRejectsForeignCursors(t *testing.T) {
	s := newStore(t)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, tc := range []struct{ name, cursor string }{
		{"not base64", "%%%"},
		{"not json", enc("nope")},
		{"shard out of range", enc(`{"s":16}`)},
		{"negative shard", enc(`{"s":-1}`)},
		{"foreign key attribute", enc(`{"s":1,"k":{"secret":"x"}}`)},
		{"key of another shard", enc(`{"s":1,"k":{"pendingShard":"2","dueAt":"x","userId":"u","taskId":"t"}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.ListPending(context.Background(), task.PendingRequest{Cursor: tc.cursor})
			if !errors.Is(err, task.ErrBadCursor) {
				t.Fatalf("error = %v, want ErrBadCursor", err)
			}
		})
	}
}

func TestMalformedItemIsAnError(t *testing.T) {
	ctx := context.Background()
	c, table := newTable(t)
	item := dynamo.ToAttrs(tableschema.ToItem(todotest.ContractTask("u", 1)))
	item[tableschema.AttrStatus] = &types.AttributeValueMemberS{Value: "Sleeping"}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatal(err)
	}
	s := New(c, table)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"get", func() error { _, err := s.Get(ctx, "u", todotest.ContractID(1)); return err }},
		{"list", func() error { _, err := s.List(ctx, "u", task.PageRequest{}); return err }},
		{"list pending", func() error { _, err := s.ListPending(ctx, task.PendingRequest{}); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			if err == nil || errors.Is(err, task.ErrNotFound) {
				t.Fatalf("error = %v, want a decode error", err)
			}
		})
	}
}

// failingAPI answers every call with err, as a throttled table would.
type failingAPI struct{ err error }

func (f failingAPI) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return nil, f.err
}
func (f failingAPI) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return nil, f.err
}
func (f failingAPI) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return nil, f.err
}
func (f failingAPI) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return nil, f.err
}
func (f failingAPI) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return nil, f.err
}
func (f failingAPI) BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return nil, f.err
}

func TestOtherErrorsAreWrappedUnchanged(t *testing.T) {
	ctx := context.Background()
	cause := &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
	s := New(failingAPI{cause}, "tasks")
	x := todotest.ContractTask("u", 1)
	for _, tc := range []struct {
		name string
		call func() error
	}{
		{"create", func() error { return s.Create(ctx, x) }},
		{"get", func() error { _, err := s.Get(ctx, "u", x.TaskID); return err }},
		{"list", func() error { _, err := s.List(ctx, "u", task.PageRequest{}); return err }},
		{"update", func() error { _, err := s.UpdatePending(ctx, "u", x.TaskID, task.Patch{}, x.DueAt); return err }},
		{"delete", func() error { _, err := s.Delete(ctx, "u", x.TaskID); return err }},
		{"expire", func() error { _, err := s.Expire(ctx, "u", x.TaskID, x.DueAt, x.DueAt); return err }},
		{"claim notification", func() error { return s.ClaimNotification(ctx, "u", x.TaskID, x.DueAt, x.DueAt, time.Minute) }},
		{"mark notified", func() error { return s.MarkNotified(ctx, "u", x.TaskID, x.DueAt) }},
		{"set repair", func() error { return s.SetScheduleRepair(ctx, "u", x.TaskID, true) }},
		{"list pending", func() error { _, err := s.ListPending(ctx, task.PendingRequest{}); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *types.ProvisionedThroughputExceededException
			if err := tc.call(); !errors.As(err, &got) {
				t.Fatalf("error = %v, want the throughput error wrapped", err)
			}
		})
	}
}

// TestSettingsContract runs the settings contract on dynalite: the
// settings item shares the task table, and is never listed as a task.
func TestSettingsContract(t *testing.T) {
	todotest.SettingsContract(t, func(t *testing.T) todotest.SettingsStores {
		s := newStore(t)
		return todotest.SettingsStores{Settings: s, Tasks: s}
	})
}
