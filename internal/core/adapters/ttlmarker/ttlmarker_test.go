package ttlmarker_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/fire/firetest"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// The marker adapter against dynalite: the timer.Timer contract the
// worker relies on (a retried create succeeds, another payload is
// ErrScheduleExists, moving or cancelling nothing is ErrScheduleNotFound).
func TestMarkersOnDynalite(t *testing.T) {
	db := testenv.DynamoClient(t, testenv.StartDynalite(t))
	s := firetest.ConsumerSchema()
	testenv.CreateItemTable(t, db, "items", s)
	c, err := ttlmarker.New(db, ttlmarker.Config{Table: "items", Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	k := contract.Key{Partition: "t1", Sort: "j1"}
	at := func(d time.Time) contract.Schedule { return s.ScheduleFor(contract.Item{Key: k, Due: d}) }
	for i, step := range []struct {
		name string
		do   func() error
		want error
	}{
		{"move before any marker", func() error { return c.Move(ctx, at(due), time.Time{}) }, timer.ErrNotFound},
		{"create", func() error { return c.Arm(ctx, at(due)) }, nil},
		{"retried create", func() error { return c.Arm(ctx, at(due)) }, nil},
		{"create for another due time", func() error { return c.Arm(ctx, at(due.Add(time.Hour))) }, timer.ErrExists},
		{"move", func() error { return c.Move(ctx, at(due.Add(time.Hour)), due) }, nil},
		{"cancel", func() error { return c.Disarm(ctx, at(due).Name, due.Add(time.Hour)) }, nil},
		{"cancel again", func() error { return c.Disarm(ctx, at(due).Name, due.Add(time.Hour)) }, timer.ErrNotFound},
		{"move after the cancel", func() error { return c.Move(ctx, at(due), due.Add(time.Hour)) }, timer.ErrNotFound},
	} {
		if err := step.do(); !errors.Is(err, step.want) || (step.want == nil && err != nil) {
			t.Fatalf("step %d %s: %v, want %v", i, step.name, err, step.want)
		}
	}
}

// The reader against dynalite: Get reads a marker back as Arm was
// given it (the reminder's marker at its reminder time), List pages
// through every marker and nothing else, whatever the page size: a
// Scan's Limit counts the adopter's items too, so pages may be short or
// empty before the last.
func TestReaderOnDynalite(t *testing.T) {
	db := testenv.DynamoClient(t, testenv.StartDynalite(t))
	s := firetest.ConsumerSchema()
	s.RemindAttr = "remindBy"
	s = s.WithDefaults()
	for _, tc := range []struct {
		name  string
		index string
	}{
		{"a scan of the table", ""},
		{"the armed index's marker partition", armedindex.DefaultName},
	} {
		t.Run(tc.name, func(t *testing.T) { readerOnDynalite(t, db, s, tc.index) })
	}
}

func readerOnDynalite(t *testing.T, db *dynamodb.Client, s contract.Schema, index string) {
	table := "items"
	if index == "" {
		testenv.CreateItemTable(t, db, table, s)
	} else {
		table = "indexed"
		testenv.CreateArmedItemTable(t, db, table, s, armedindex.Spec{})
	}
	c, err := ttlmarker.New(db, ttlmarker.Config{Table: table, Schema: s, Index: index})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	var want []timer.Schedule
	for i := range 5 {
		it := contract.Item{Key: contract.Key{Partition: "t1", Sort: fmt.Sprintf("j%d", i)}, Due: due.Add(time.Duration(i) * time.Hour),
			State: "Queued", Remind: due.Add(-time.Hour)}
		sc := s.ScheduleFor(it)
		r, ok := s.ReminderFor(it)
		if !ok {
			t.Fatal("no reminder")
		}
		for _, x := range []timer.Schedule{sc, r} {
			if err := c.Arm(ctx, x); err != nil {
				t.Fatal(err)
			}
			x.ClientToken = ""
			want = append(want, x)
		}
		// The adopter's own items, which the Scan reads and filters out
		// (and the index holds in other partitions).
		for j := range 3 {
			if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
				"tenantId": &types.AttributeValueMemberS{Value: fmt.Sprintf("t%d", j)},
				"jobId":    &types.AttributeValueMemberS{Value: fmt.Sprintf("j%d", i)},
				"runAt":    &types.AttributeValueMemberS{Value: contract.FormatTime(due)},
				"status":   &types.AttributeValueMemberS{Value: "Queued"},
			}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	byName := func(a []timer.Schedule) { sort.Slice(a, func(i, j int) bool { return a[i].Name < a[j].Name }) }
	byName(want)
	for _, w := range want {
		got, err := c.Get(ctx, w.Name, time.Time{})
		if err != nil || !reflect.DeepEqual(got, w) {
			t.Fatalf("get %s = %+v, %v; want %+v", w.Name, got, err, w)
		}
	}
	if _, err := c.Get(ctx, "job-none", due); !errors.Is(err, timer.ErrNotFound) {
		t.Fatalf("get of no marker: %v; want ErrNotFound", err)
	}
	listAll := func(limit int) []timer.Schedule {
		t.Helper()
		var out []timer.Schedule
		page := timer.PageRequest{Limit: limit}
		for range 100 {
			p, err := c.List(ctx, page)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if len(p.Schedules) > limit {
				t.Fatalf("a page of %d; limit %d", len(p.Schedules), limit)
			}
			out = append(out, p.Schedules...)
			if page.Cursor = p.Cursor; p.Cursor == "" {
				byName(out)
				return out
			}
		}
		t.Fatal("no last page after 100")
		return nil
	}
	for _, limit := range []int{1, 3, 100} {
		if got := listAll(limit); !reflect.DeepEqual(got, want) {
			t.Fatalf("limit %d: listed\n%+v\nwant\n%+v", limit, got, want)
		}
	}
	if err := c.Disarm(ctx, want[0].Name, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, want[0].Name, time.Time{}); !errors.Is(err, timer.ErrNotFound) {
		t.Fatalf("get of a cancelled marker: %v; want ErrNotFound", err)
	}
	if got := listAll(100); !reflect.DeepEqual(got, want[1:]) {
		t.Fatalf("listed after a cancel %+v; want %+v", got, want[1:])
	}
	if _, err := c.List(ctx, timer.PageRequest{Cursor: "not-a-cursor"}); !errors.Is(err, ttlmarker.ErrBadCursor) {
		t.Fatalf("list with a bad cursor: %v; want ErrBadCursor", err)
	}
}

// The reader contract every timer shares, on a fresh table of the fixture schema per case.
func TestReaderContractOnDynalite(t *testing.T) {
	db := testenv.DynamoClient(t, testenv.StartDynalite(t))
	tables := 0
	timertest.ReaderContract(t, timertest.ReaderBackend{New: func(t *testing.T) timertest.ContractTimer {
		tables++
		name := fmt.Sprintf("items%d", tables)
		testenv.CreateItemTable(t, db, name, timertest.Schema)
		c, err := ttlmarker.New(db, ttlmarker.Config{Table: name, Schema: timertest.Schema})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}})
}
