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
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// listAll pages through items with the given page size and request.
func listAll(t *testing.T, items reconcile.Items, limit int, dueBy time.Time) []string {
	t.Helper()
	var keys []string
	req := reconcile.ListRequest{Limit: limit, DueBy: dueBy}
	for range 1000 {
		page, err := items.List(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			keys = append(keys, it.Key.String())
		}
		if page.Cursor == "" {
			slices.Sort(keys)
			return keys
		}
		req.Cursor = page.Cursor
	}
	t.Fatal("the listing does not end")
	return nil
}

// The Scan view lists what the in-memory view lists, for an adopter's
// schema: the armed items (by their due time as an instant, whatever the
// writer's spelling) and the fired ones not delivered, never the others;
// and a bad cursor is an error, not a listing from the start.
func TestArmedItemsListLikeMemory(t *testing.T) {
	s := contract.Schema{PartitionKey: "tenant", SortKey: "job", DueAttr: "runAt", StateAttr: "phase",
		ArmedStates: []string{"Queued", "Held"}, FiredState: "Started"}.WithDefaults()
	c := testenv.DynamoClient(t, endpoint)
	name := "armed-" + strconv.FormatInt(tables.Add(1), 10)
	testenv.CreateItemTable(t, c, name, s)
	armed, err := NewArmedItems(c, name, s)
	if err != nil {
		t.Fatal(err)
	}
	mem := inmem.NewItems(s)
	at := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	put := func(job, phase, runAt string, extra ...string) {
		attrs := map[string]string{"tenant": "acme", "job": job, "phase": phase, "runAt": runAt}
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
	put("delivered", "Started", contract.FormatTime(at), s.DeliveredAtAttr, contract.FormatTime(at))
	put("done", "Done", contract.FormatTime(at))
	put("no-due", "Queued", "")
	for _, tc := range []struct {
		name  string
		dueBy time.Time
		want  []string
	}{
		{"every armed and undelivered item", time.Time{}, []string{"acme/fired", "acme/held-late", "acme/offset", "acme/queued"}},
		{"due by noon, as instants", at, []string{"acme/fired", "acme/offset", "acme/queued"}},
	} {
		for _, limit := range []int{1, 2, 100} {
			t.Run(tc.name+"/limit "+strconv.Itoa(limit), func(t *testing.T) {
				got, inMem := listAll(t, armed, limit, tc.dueBy), listAll(t, inmem.Armed{Items: mem}, limit, tc.dueBy)
				if !slices.Equal(got, tc.want) || !slices.Equal(inMem, tc.want) {
					t.Fatalf("dynamo lists %v, memory %v, want %v", got, inMem, tc.want)
				}
			})
		}
	}
	t.Run("get", func(t *testing.T) {
		it, err := armed.Get(context.Background(), contract.Key{Partition: "acme", Sort: "offset"})
		if err != nil || !it.Due.Equal(at.Add(-30*time.Minute)) {
			t.Fatalf("Get = %+v, %v", it, err)
		}
		if _, err := armed.Get(context.Background(), contract.Key{Partition: "acme", Sort: "nope"}); !errors.Is(err, reconcile.ErrItemNotFound) {
			t.Fatalf("Get of a missing item: %v, want ErrItemNotFound", err)
		}
	})
	t.Run("a bad cursor", func(t *testing.T) {
		for _, cur := range []string{"%%%", "bnVsbA", "e30"} { // not base64, null, {}
			if _, err := armed.List(context.Background(), reconcile.ListRequest{Cursor: cur}); !errors.Is(err, ErrBadCursor) {
				t.Errorf("cursor %q: %v, want ErrBadCursor", cur, err)
			}
		}
	})
}
