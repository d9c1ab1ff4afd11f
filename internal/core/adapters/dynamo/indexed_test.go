package dynamo

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// The index view lists what the in-memory index view lists, for an
// adopter's schema and a state-keyed index: the armed items and the
// fired ones not delivered within the fired window, never the others
// (nor a fired one older than the window, which the Scan would list).
func TestIndexedItemsListLikeMemory(t *testing.T) {
	s := contract.Schema{PartitionKey: "tenant", SortKey: "job", DueAttr: "runAt", StateAttr: "phase",
		ArmedStates: []string{"Queued", "Held"}, FiredState: "Started"}.WithDefaults()
	spec := armedindex.Spec{}.WithDefaults(s)
	c := testenv.DynamoClient(t, endpoint)
	name := "indexed-" + strconv.FormatInt(tables.Add(1), 10)
	testenv.CreateArmedItemTable(t, c, name, s, spec)
	at := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return at.Add(time.Hour) }
	view, err := NewIndexedItems(c, name, s, spec, now)
	if err != nil {
		t.Fatal(err)
	}
	mem := inmem.NewItems(s)
	put := func(job, phase, runAt string, extra ...string) {
		attrs := map[string]string{"tenant": "acme", "job": job, "phase": phase, "payload": "x"}
		if runAt != "" {
			attrs["runAt"] = runAt
		}
		for i := 0; i+1 < len(extra); i += 2 {
			attrs[extra[i]] = extra[i+1]
		}
		if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(name), Item: ToAttrs(attrs)}); err != nil {
			t.Fatal(err)
		}
		if err := mem.Put(attrs); err != nil {
			t.Fatal(err)
		}
	}
	put("queued", "Queued", contract.FormatTime(at))
	put("held-late", "Held", contract.FormatTime(at.Add(2*time.Hour)))
	put("offset", "Queued", "2030-01-01T12:30:00+01:00") // 11:30Z, sorts after 12:00Z as a string
	put("fired", "Started", contract.FormatTime(at), s.ClaimAtAttr, contract.FormatTime(at))
	put("fired-long-ago", "Started", contract.FormatTime(at.Add(-48*time.Hour)), s.ClaimAtAttr, contract.FormatTime(at.Add(-48*time.Hour)))
	put("delivered", "Started", contract.FormatTime(at), s.DeliveredAtAttr, contract.FormatTime(at))
	put("done", "Done", contract.FormatTime(at))
	put("no-due", "Queued", "")
	inMem := inmem.Armed{Items: mem, Index: &spec, Now: now}
	for _, tc := range []struct {
		name  string
		dueBy time.Time
		want  []string
	}{
		{"every armed and undelivered item", time.Time{}, []string{"acme/fired", "acme/held-late", "acme/offset", "acme/queued"}},
		// The key condition compares as stored: "…12:30:00+01:00" sorts
		// after noon, so the overdue listing reaches it later (the items
		// phase lists it).
		{"due by noon, as stored", at, []string{"acme/fired", "acme/queued"}},
	} {
		for _, limit := range []int{1, 2, 100} {
			t.Run(tc.name+"/limit "+strconv.Itoa(limit), func(t *testing.T) {
				got := listAll(t, view, limit, tc.dueBy)
				if !slices.Equal(got, tc.want) {
					t.Fatalf("dynamo lists %v, want %v", got, tc.want)
				}
				if tc.dueBy.IsZero() {
					if m := listAll(t, inMem, limit, tc.dueBy); !slices.Equal(m, tc.want) {
						t.Fatalf("memory lists %v, want %v", m, tc.want)
					}
				}
				n, err := view.(reconcile.Counter).Count(context.Background(), reconcile.ListRequest{DueBy: tc.dueBy})
				if err != nil || n < len(tc.want) {
					t.Fatalf("Count = %d, %v; want at least %d", n, err, len(tc.want))
				}
			})
		}
	}
	t.Run("a bad cursor", func(t *testing.T) {
		for _, cur := range []string{"%%%", "bnVsbA", "eyJwIjo5fQ", "eyJwIjowLCJrIjp7InBheWxvYWQiOiJ4In19"} { // not base64, null, {"p":9}, a key of another attribute
			if _, err := view.List(context.Background(), reconcile.ListRequest{Cursor: cur}); !errors.Is(err, ErrBadCursor) {
				t.Errorf("cursor %q: %v, want ErrBadCursor", cur, err)
			}
		}
	})
}

// A sharded index with marks (the to-do app's kind): the writer's shard
// attribute places an item; MarkScheduled records a confirmation only on
// an item still armed with that due time, in the writer's spelling, and a
// writer's PutItem drops it.
func TestIndexedItemsShardedWithMarks(t *testing.T) {
	s := contract.Schema{PartitionKey: "tenant", SortKey: "job", DueAttr: "runAt", StateAttr: "phase",
		ArmedStates: []string{"Queued"}, FiredState: "Started"}.WithDefaults()
	spec := armedindex.Spec{Name: "open", PartitionAttr: "shard", Partitions: []string{"0", "1"},
		ConfirmedAttr: "checkedFor", RepairAttr: "repair", UpdatedAttr: "updated"}
	c := testenv.DynamoClient(t, endpoint)
	name := "sharded-" + strconv.FormatInt(tables.Add(1), 10)
	testenv.CreateArmedItemTable(t, c, name, s, spec)
	view, err := NewIndexedItems(c, name, s, spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	marks, ok := view.(reconcile.Marks)
	if !ok {
		t.Fatal("a spec with marks gives no reconcile.Marks")
	}
	ctx := context.Background()
	at := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	put := func(job, shard, runAt string) {
		attrs := map[string]string{"tenant": "acme", "job": job, "phase": "Queued", "runAt": runAt, "repair": "true"}
		if shard != "" {
			attrs["shard"] = shard
		}
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: ToAttrs(attrs)}); err != nil {
			t.Fatal(err)
		}
	}
	put("a", "0", contract.FormatTime(at))
	put("b", "1", "2030-01-01T13:00:00+01:00")
	put("unsharded", "", contract.FormatTime(at))
	if got := listAll(t, view, 1, time.Time{}); !slices.Equal(got, []string{"acme/a", "acme/b"}) {
		t.Fatalf("lists %v, want the sharded items", got)
	}
	b := contract.Key{Partition: "acme", Sort: "b"}
	if err := marks.MarkScheduled(ctx, b, at.Add(time.Hour)); !errors.Is(err, fire.ErrConditionFailed) {
		t.Fatalf("MarkScheduled for another due time: %v, want ErrConditionFailed", err)
	}
	if err := marks.MarkScheduled(ctx, b, at); err != nil {
		t.Fatalf("MarkScheduled in the writer's spelling: %v", err)
	}
	it, err := view.Get(ctx, b)
	if err != nil || !it.Confirmed() || it.Repair {
		t.Fatalf("after MarkScheduled: %+v, %v; want confirmed, no repair mark", it, err)
	}
	put("b", "1", contract.FormatTime(at))
	if it, _ := view.Get(ctx, b); it.Confirmed() || !it.Repair {
		t.Fatalf("after the writer's PutItem: %+v; want unconfirmed", it)
	}
	if err := marks.SetScheduleRepair(ctx, contract.Key{Partition: "acme", Sort: "gone"}, true); !errors.Is(err, fire.ErrConditionFailed) {
		t.Fatalf("SetScheduleRepair of a missing item: %v, want ErrConditionFailed", err)
	}
}
