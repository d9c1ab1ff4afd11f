package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/examples/jobs/jobschema"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// ReconcileReads is what one full reconciler pass reads to list the
// armed items of a table of Items, Armed of them, on one View: its
// Requests, the items (index entries) they evaluated, their ReadUnits
// (ReadUnitModel), and the GetItem reads (none in a pass without drift).
type ReconcileReads struct {
	View                      string
	Items, Armed              int
	Requests, ItemsRead, Gets int
	ReadUnits, GetUnits       float64
}

// The views ReconcileReads measures: dynamo.ArmedItems, dynamo.IndexedItems.
const (
	ViewScan  = "Scan of the table"
	ViewIndex = "Query of the armed index"
)

// ReconcileReadSizes are the table sizes `make bench` measures, every
// ReconcileArmedEvery-th item armed (1%).
var ReconcileReadSizes = []int{100_000, 1_000_000}

const ReconcileArmedEvery = 100

// reconcilePayloadBytes makes an item about 1 KB: the adopter's own data.
const reconcilePayloadBytes = 900

// ReadUnitModel says how readTable counts read units, after DynamoDB's
// documented rules. An item's size is the sum of its attribute names' and
// string values' lengths; an index entry's counts the table's key, the
// index's key and the projected attributes.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html
const ReadUnitModel = "a Scan or Query page: the sizes of the items (index entries) it evaluated, rounded up to 4 KB, " +
	"half a unit per 4 KB (eventually consistent), at least one 4 KB unit a request; a GetItem: 1 unit per 4 KB (strongly consistent)"

// ReconcileReadsTable renders the measured passes, with each pass's
// on-demand read price and a day's at one pass every 30 minutes.
func (r Report) ReconcileReadsTable() Table {
	t := Table{Header: []string{"items", "armed", "listing", "requests", "items read", "read units", "per pass", "per day (48 passes)"}}
	for _, x := range r.ReconcileReads {
		usd := x.ReadUnits * ListPrices.DynamoRead.Each()
		t.Rows = append(t.Rows, []string{fmt.Sprint(x.Items), fmt.Sprint(x.Armed), x.View, fmt.Sprint(x.Requests),
			fmt.Sprint(x.ItemsRead), strconv.FormatFloat(x.ReadUnits, 'f', -1, 64), fmt.Sprintf("$%.5f", usd), fmt.Sprintf("$%.4f", 48*usd)})
	}
	return t
}

// MeasureReconcileReads runs one full pass of the core's reconciler, with
// the DynamoDB adapter of each view, over a readTable of items items of
// the jobs example's schema, every armedEvery-th armed (its schedule in
// place) and the rest fired and delivered.
func MeasureReconcileReads(ctx context.Context, items, armedEvery int) ([]ReconcileReads, error) {
	var out []ReconcileReads
	for _, view := range []string{ViewScan, ViewIndex} {
		r, err := measureReconcileView(ctx, items, armedEvery, view)
		if err != nil {
			return nil, fmt.Errorf("%s of %d items: %w", view, items, err)
		}
		out = append(out, r)
	}
	return out, nil
}

func measureReconcileView(ctx context.Context, n, every int, view string) (ReconcileReads, error) {
	s := jobschema.Schema
	clk := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	spec := armedindex.Spec{}.WithDefaults(s)
	tbl := &readTable{schema: s, spec: spec, n: n, every: every, start: clk.Now(), payload: strings.Repeat("x", reconcilePayloadBytes)}
	sched := inmem.NewScheduler()
	sched.ListPrefix = s.ScheduleNamePrefix
	for i := 0; i < n; i += every {
		it, err := s.ItemFrom(tbl.attrs(i))
		if err != nil {
			return ReconcileReads{}, err
		}
		if err := sched.Arm(ctx, s.ScheduleFor(it)); err != nil {
			return ReconcileReads{}, err
		}
	}
	var items reconcile.Items
	var err error
	if view == ViewScan {
		items, err = dynamo.NewArmedItems(tbl, "jobs", s)
	} else {
		items, err = dynamo.NewIndexedItems(tbl, "jobs", s, spec, clk.Now)
	}
	if err != nil {
		return ReconcileReads{}, err
	}
	r, err := reconcile.New(reconcile.Config{Budget: 24 * time.Hour, RatePerSec: 1000}, reconcile.Deps{
		Schema: s, Items: items, Scheduler: sched, Schedules: sched, Firer: noFirer{},
		Checkpoints: &inmem.Checkpoints{}, Clock: clk, Sleep: clk.Sleep, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return ReconcileReads{}, err
	}
	res, err := r.Run(ctx)
	if err != nil {
		return ReconcileReads{}, err
	}
	if !res.Completed || res.Repaired() != 0 || res.Errors != 0 {
		return ReconcileReads{}, fmt.Errorf("the pass did not complete cleanly: %+v", res)
	}
	return ReconcileReads{View: view, Items: n, Armed: (n + every - 1) / every,
		Requests: tbl.requests, ItemsRead: tbl.read, ReadUnits: tbl.units, Gets: tbl.gets, GetUnits: tbl.getUnits}, nil
}

// noFirer fires nothing: the measured pass finds nothing overdue.
type noFirer struct{}

func (noFirer) Fire(context.Context, contract.Payload) (fire.Outcome, error) {
	return "", fmt.Errorf("bench: nothing is overdue")
}

// readTable is a table of the jobs schema that exists only as a rule
// (item i: tenant "acme", job "j%09d", armed when i is a multiple of
// every), with its armed index, serving the reconciler adapters' Scan,
// Query and GetItem requests and counting their reads by ReadUnitModel.
// It knows the adapters' expressions, not DynamoDB's grammar.
type readTable struct {
	schema  contract.Schema
	spec    armedindex.Spec
	n       int
	every   int
	start   time.Time
	payload string

	requests, read, gets int
	units, getUnits      float64
	parts                map[string][]int
}

func (t *readTable) armed(i int) bool { return i%t.every == 0 }

// attrs is item i.
func (t *readTable) attrs(i int) map[string]string {
	s := t.schema
	m := map[string]string{s.PartitionKey: "acme", s.SortKey: jobKey(i), "payload": t.payload}
	if t.armed(i) {
		m[s.StateAttr], m[s.DueAttr] = jobschema.Queued, t.due(i)
		return m
	}
	at := t.due(i)
	m[s.StateAttr], m[s.DueAttr] = jobschema.Done, at
	m[s.FiredAtAttr], m[s.ClaimAtAttr], m[s.DeliveredAtAttr] = at, at, at
	return m
}

// due is item i's due time: within the next day when armed; the item
// after each armed one within the last day (the fired window the index
// view reads); the others in the 1,000 days before that.
func (t *readTable) due(i int) string {
	switch {
	case t.armed(i):
		return contract.FormatTime(t.start.Add(time.Hour + time.Duration(i)*time.Second%(23*time.Hour)))
	case i%t.every == 1:
		return contract.FormatTime(t.start.Add(-time.Hour - time.Duration(i)*time.Second%(22*time.Hour)))
	}
	return contract.FormatTime(t.start.Add(-time.Duration(2+i%998)*24*time.Hour - time.Duration(i%3600)*time.Second))
}

func size(m map[string]string, only func(string) bool) int {
	n := 0
	for k, v := range m {
		if only == nil || only(k) {
			n += len(k) + len(v)
		}
	}
	return n
}

// entrySize is the size of item i's index entry.
func (t *readTable) entrySize(m map[string]string) int {
	keep := map[string]bool{t.schema.PartitionKey: true, t.schema.SortKey: true, t.spec.PartitionAttr: true, t.schema.DueAttr: true}
	for _, a := range t.spec.Projected(t.schema) {
		keep[a] = true
	}
	return size(m, func(k string) bool { return keep[k] })
}

// page counts one request that evaluated bytes.
func (t *readTable) page(bytes, items int) {
	t.requests++
	t.read += items
	t.units += math.Max(1, math.Ceil(float64(bytes)/4096)) / 2
}

func jobKey(i int) string { return fmt.Sprintf("j%09d", i) }

func (t *readTable) key(i int) map[string]types.AttributeValue {
	return dynamo.ToAttrs(t.schema.Attrs(contract.Key{Partition: "acme", Sort: jobKey(i)}))
}

func (t *readTable) index(k map[string]types.AttributeValue) (int, error) {
	job, ok := k[t.schema.SortKey].(*types.AttributeValueMemberS)
	if !ok || !strings.HasPrefix(job.Value, "j") {
		return 0, fmt.Errorf("bench: not a key of the table: %v", k)
	}
	return strconv.Atoi(job.Value[1:])
}

// Scan reads from the start key on, up to Limit items or 1 MB.
func (t *readTable) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	from := 0
	if in.ExclusiveStartKey != nil {
		i, err := t.index(in.ExclusiveStartKey)
		if err != nil {
			return nil, err
		}
		from = i + 1
	}
	limit := cmp.Or(int(aws.ToInt32(in.Limit)), math.MaxInt32)
	out := &dynamodb.ScanOutput{}
	bytes, n, i := 0, 0, from
	for ; i < t.n && n < limit && bytes < 1<<20; i++ {
		m := t.attrs(i)
		bytes += size(m, nil)
		n++
		it, _ := t.schema.ItemFrom(m)
		if t.schema.Armed(it) || (it.State == t.schema.FiredState && !it.Delivered) {
			out.Items = append(out.Items, dynamo.ToAttrs(m))
		}
	}
	t.page(bytes, n)
	if i < t.n {
		out.LastEvaluatedKey = t.key(i - 1)
	}
	return out, nil
}

// Query reads one partition of the armed index in due-time order, after
// the start key, within the key condition's due-time range, up to Limit
// entries or 1 MB.
func (t *readTable) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	vals := dynamo.FromAttrs(in.ExpressionAttributeValues)
	cond := aws.ToString(in.KeyConditionExpression)
	lo, hi := "", "\uffff"
	switch {
	case strings.Contains(cond, " BETWEEN "):
		lo, hi = vals[":v1"], vals[":v2"]
	case strings.Contains(cond, " >= "):
		lo = vals[":v1"]
	case strings.Contains(cond, " <= "):
		hi = vals[":v1"]
	}
	// DynamoDB finds the range's start without reading what is before it.
	entries := t.partition(vals[":v0"])
	from := sort.Search(len(entries), func(k int) bool { return t.due(entries[k]) >= lo })
	if in.ExclusiveStartKey != nil {
		i, err := t.index(in.ExclusiveStartKey)
		if err != nil {
			return nil, err
		}
		from = slices.Index(entries, i) + 1
	}
	limit := cmp.Or(int(aws.ToInt32(in.Limit)), math.MaxInt32)
	out := &dynamodb.QueryOutput{}
	bytes, n, last := 0, 0, -1
	for _, i := range entries[from:] {
		if t.due(i) > hi {
			break
		}
		m := t.attrs(i)
		if n == limit || bytes >= 1<<20 {
			out.LastEvaluatedKey = t.key(last)
			break
		}
		bytes += t.entrySize(m)
		n++
		last = i
		if in.Select != types.SelectCount {
			out.Items = append(out.Items, dynamo.ToAttrs(m))
		}
	}
	out.Count = int32(n)
	t.page(bytes, n)
	return out, nil
}

// partition is the item indexes in a partition of the index (the armed
// state's or the fired state's), in due-time order, built once.
func (t *readTable) partition(v string) []int {
	if t.parts == nil {
		t.parts = map[string][]int{}
		var armed, fired []int
		for i := 0; i < t.n; i++ {
			if t.armed(i) {
				armed = append(armed, i)
			} else {
				fired = append(fired, i)
			}
		}
		for v, idx := range map[string][]int{jobschema.Queued: armed, jobschema.Done: fired} {
			dues := make(map[int]string, len(idx))
			for _, i := range idx {
				dues[i] = t.due(i)
			}
			slices.SortStableFunc(idx, func(a, b int) int { return strings.Compare(dues[a], dues[b]) })
			t.parts[v] = idx
		}
	}
	return t.parts[v]
}

// GetItem reads item i, strongly consistent.
func (t *readTable) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	i, err := t.index(in.Key)
	if err != nil || i >= t.n {
		return &dynamodb.GetItemOutput{}, nil
	}
	m := t.attrs(i)
	t.gets++
	t.getUnits += math.Ceil(float64(size(m, nil)) / 4096)
	return &dynamodb.GetItemOutput{Item: dynamo.ToAttrs(m)}, nil
}

// UpdateItem is not made by a pass without drift.
func (t *readTable) UpdateItem(context.Context, *dynamodb.UpdateItemInput, ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	return nil, fmt.Errorf("bench: the measured pass writes no item")
}
