package cancel

import (
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

const (
	user = "user-1"
	tid  = "01JBQ1R8ZK3W4X5Y6Z7A8B9C0D"
)

var due = time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)

// schema is the fixture's (timertest.Schema): armed state Pending, fired
// state Fired, claim and delivery marks and reminders.
var schema = timertest.Schema

// pending is an armed item, as its writer puts it.
func pending() *contract.Item {
	return &contract.Item{Key: contract.Key{Partition: user, Sort: tid}, State: "Pending", Due: due, Token: "TOKEN"}
}

func with(f func(t *contract.Item)) *contract.Item {
	t := pending()
	f(t)
	return t
}

// img is an item's image in the change feed (a copy).
func img(t *contract.Item) *contract.Item {
	if t == nil {
		return nil
	}
	it := *t
	return &it
}

func change(kind changefeed.Kind, old, new *contract.Item) changefeed.Change {
	return changefeed.Change{EventID: "ev1", Kind: kind, Key: contract.Key{Partition: user, Sort: tid}, Old: img(old), New: img(new)}
}

// consumer is an adopter's schema: other keys, due attribute and states,
// two of them armed.
func consumer() contract.Schema {
	return contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt",
		ArmedStates: []string{"Queued", "Retrying"}, FiredState: "Done", ScheduleNamePrefix: "job-"}.WithDefaults()
}

func TestDecide(t *testing.T) {
	later := due.Add(time.Hour)
	key := contract.Key{Partition: user, Sort: tid}
	cancelMsg := Message{Action: ActionCancel, Partition: user, Sort: tid, EventID: "ev1"}
	msg := func(a Action, at time.Time) *Message {
		return &Message{Action: a, Partition: user, Sort: tid, DueAt: at, Token: "TOKEN", EventID: "ev1"}
	}
	done := with(func(t *contract.Item) { t.State = "Done" })
	expired := with(func(t *contract.Item) { t.State = "Fired" })
	// claimed is what the firing's claim writes: Expired, with a claim mark at
	// (or after) the deadline.
	claimed := with(func(t *contract.Item) { t.State, t.ClaimAt = "Fired", due })
	inline := with(func(t *contract.Item) { t.Inline = true })
	tests := []struct {
		name     string
		kind     changefeed.Kind
		old, new *contract.Item
		want     *Message
	}{
		{"insert by the API (inline) does nothing", changefeed.Insert, nil, inline, nil},
		{"insert by another writer schedules", changefeed.Insert, nil, pending(), msg(ActionSchedule, due)},
		{"insert not armed", changefeed.Insert, nil, done, nil},
		{"insert without a due time", changefeed.Insert, nil, with(func(t *contract.Item) { t.Due = time.Time{} }), nil},
		{"modify done to pending schedules", changefeed.Modify, done, pending(), msg(ActionSchedule, due)},
		{"modify pending to done cancels", changefeed.Modify, pending(), done, &cancelMsg},
		{"modify pending, due time removed, cancels", changefeed.Modify, pending(),
			with(func(t *contract.Item) { t.Due = time.Time{} }), &cancelMsg},
		{"remove of a pending task cancels", changefeed.Remove, pending(), nil, &cancelMsg},
		{"deadline moved reschedules", changefeed.Modify, pending(), with(func(t *contract.Item) { t.Due = later }), msg(ActionReschedule, later)},
		{"deadline moved and title edited reschedules", changefeed.Modify, pending(),
			with(func(t *contract.Item) { t.Due = later }), msg(ActionReschedule, later)},
		{"deadline moved on an item without a token reschedules", changefeed.Modify, with(func(t *contract.Item) { t.Token = "" }),
			with(func(t *contract.Item) { t.Due = later; t.Token = "" }),
			&Message{Action: ActionReschedule, Partition: user, Sort: tid, DueAt: later, EventID: "ev1"}},
		{"an edit of an attribute the contract does not read (a title)", changefeed.Modify, pending(), with(func(t *contract.Item) {}), nil},
		{"inline mark dropped", changefeed.Modify, inline, pending(), nil},
		{"an edit of an attribute the contract does not read (a repair flag)", changefeed.Modify, pending(), with(func(t *contract.Item) {}), nil},
		{"same deadline in another zone", changefeed.Modify, pending(),
			with(func(t *contract.Item) { t.Due = due.In(time.FixedZone("x", 3600)) }), nil},
		{"pending to expired by the claim (the schedule fired)", changefeed.Modify, pending(), claimed, nil},
		{"pending to expired by a writer (no claim mark) cancels", changefeed.Modify, pending(), expired, &cancelMsg},
		{"pending to expired by a writer, a claim mark before the deadline, cancels", changefeed.Modify,
			with(func(t *contract.Item) { t.ClaimAt = due.Add(-time.Hour) }),
			with(func(t *contract.Item) { t.State, t.ClaimAt = "Fired", due.Add(-time.Hour) }), &cancelMsg},
		{"pending to expired by a writer, the claim mark unchanged, cancels", changefeed.Modify,
			with(func(t *contract.Item) { t.ClaimAt = due }),
			with(func(t *contract.Item) { t.State, t.ClaimAt = "Fired", due }), &cancelMsg},
		{"expired, notifiedAt recorded", changefeed.Modify, expired,
			with(func(t *contract.Item) { t.State = "Fired"; t.Delivered = true }), nil},
		{"remove of an expired task", changefeed.Remove, expired, nil, nil},
		{"remove of a done task", changefeed.Remove, done, nil, nil},
		{"modify of a done task", changefeed.Modify, done, with(func(t *contract.Item) { t.State = "Done" }), nil},
		// Missing images.
		{"remove without old image cancels by key", changefeed.Remove, nil, nil, &cancelMsg},
		{"modify without old image, new done, cancels", changefeed.Modify, nil, done, &cancelMsg},
		{"modify without old image, new expired, cancels", changefeed.Modify, nil, expired, &cancelMsg},
		{"modify without old image, new pending, reschedules", changefeed.Modify, nil, pending(), msg(ActionReschedule, due)},
		{"modify without new image", changefeed.Modify, pending(), nil, nil},
		{"modify without any image", changefeed.Modify, nil, nil, nil},
		{"insert without image", changefeed.Insert, nil, nil, nil},
		{"unknown kind", changefeed.Kind("TRUNCATE"), pending(), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := change(tt.kind, tt.old, tt.new)
			c.Key = key
			checkDecide(t, schema, c, tt.want)
		})
	}
}

func checkDecide(t *testing.T, s contract.Schema, c changefeed.Change, want *Message) {
	t.Helper()
	got, ok := Decide(s, c)
	if ok != (want != nil) {
		t.Fatalf("Decide ok = %v, want %v (message %+v)", ok, want != nil, got)
	}
	if want == nil {
		return
	}
	if _, err := Parse(got.Encode()); err != nil {
		t.Errorf("decided message does not parse: %v", err)
	}
	if !got.DueAt.Equal(want.DueAt) {
		t.Errorf("DueAt = %v, want %v", got.DueAt, want.DueAt)
	}
	// Every message carries the old image's due time, which the Step
	// Functions timer needs to name the execution to stop (none without
	// an old image).
	var wantOld time.Time
	if c.Old != nil {
		wantOld = c.Old.Due
	}
	if !got.OldDueAt.Equal(wantOld) {
		t.Errorf("OldDueAt = %v, want %v", got.OldDueAt, wantOld)
	}
	// The reminder fields are TestDecideReminder's: these items have none.
	got.NoOldReminder, got.RemindAt, got.OldRemindAt = want.NoOldReminder, want.RemindAt, want.OldRemindAt
	w := *want
	got.DueAt, w.DueAt, got.OldDueAt, w.OldDueAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	if got != w {
		t.Errorf("Decide = %+v, want %+v", got, w)
	}
}

// An adopter's items, written by any writer, read with its schema: the
// keys, the due attribute and the armed states are the schema's.
func TestDecideConsumerSchema(t *testing.T) {
	s := consumer()
	k := contract.Key{Partition: "t1", Sort: "j1"}
	run := time.Date(2030, 3, 1, 9, 0, 0, 0, time.UTC)
	item := func(state string, at time.Time) *contract.Item {
		return &contract.Item{Key: k, State: state, Due: at}
	}
	claimed := func(at, claim time.Time) *contract.Item {
		return &contract.Item{Key: k, State: "Done", Due: at, ClaimAt: claim}
	}
	msg := func(a Action, at time.Time) *Message {
		return &Message{Action: a, Partition: "t1", Sort: "j1", DueAt: at, EventID: "e"}
	}
	cancelMsg := &Message{Action: ActionCancel, Partition: "t1", Sort: "j1", EventID: "e"}
	for _, tt := range []struct {
		name     string
		kind     changefeed.Kind
		old, new *contract.Item
		want     *Message
	}{
		{"plain put schedules", changefeed.Insert, nil, item("Queued", run), msg(ActionSchedule, run)},
		{"put in another armed state schedules", changefeed.Insert, nil, item("Retrying", run), msg(ActionSchedule, run)},
		{"put in the to-do's armed state does nothing", changefeed.Insert, nil, item("Pending", run), nil},
		{"moving between armed states does nothing", changefeed.Modify, item("Queued", run), item("Retrying", run), nil},
		{"runAt moved reschedules", changefeed.Modify, item("Queued", run), item("Queued", run.Add(time.Hour)), msg(ActionReschedule, run.Add(time.Hour))},
		{"cancelled cancels", changefeed.Modify, item("Queued", run), item("Cancelled", run), cancelMsg},
		{"fired by the claim does nothing", changefeed.Modify, item("Queued", run), claimed(run, run.Add(time.Second)), nil},
		{"completed by the writer with the fired state cancels", changefeed.Modify, item("Queued", run), item("Done", run), cancelMsg},
		{"completed by the writer, a claim of an earlier runAt kept, cancels", changefeed.Modify,
			&contract.Item{Key: k, State: "Queued", Due: run, ClaimAt: run.Add(-time.Hour)}, claimed(run, run.Add(-time.Hour)), cancelMsg},
		{"deleted cancels", changefeed.Remove, item("Queued", run), nil, cancelMsg},
		{"deleted after firing does nothing", changefeed.Remove, item("Done", run), nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			checkDecide(t, s, changefeed.Change{EventID: "e", Kind: tt.kind, Key: k, Old: tt.old, New: tt.new}, tt.want)
		})
	}
}

// Items without a state (the to-do app's settings and checkpoint items)
// are never armed: no write of theirs touches a schedule.
func TestDecideIgnoresStatelessItems(t *testing.T) {
	k := contract.Key{Partition: user, Sort: "#settings"}
	img := func(enabled string) *contract.Item { return &contract.Item{Key: k, Token: enabled} }
	for _, c := range []changefeed.Change{
		{EventID: "e", Kind: changefeed.Insert, Key: k, New: img("true")},
		{EventID: "e", Kind: changefeed.Modify, Key: k, Old: img("true"), New: img("false")},
		{EventID: "e", Kind: changefeed.Remove, Key: k, Old: img("false")},
	} {
		if m, ok := Decide(schema, c); ok {
			t.Errorf("%s of a stateless item decided %+v", c.Kind, m)
		}
	}
}

// A replayed record (same eventID) gives the same message and so the same
// deduplication id; another record of the same transition gets another.
func TestDecideReplay(t *testing.T) {
	done := with(func(t *contract.Item) { t.State = "Done" })
	c := change(changefeed.Modify, pending(), done)
	c.EventID = "ev-7"
	a, okA := Decide(schema, c)
	b, okB := Decide(schema, c)
	if !okA || !okB || a != b || a.DedupID() != b.DedupID() {
		t.Fatalf("replay decided differently: %+v %v / %+v %v", a, okA, b, okB)
	}
	c.EventID = "ev-8"
	other, _ := Decide(schema, c)
	if other.DedupID() == a.DedupID() {
		t.Errorf("different records share dedup id %q", a.DedupID())
	}
	if a.GroupID() != other.GroupID() || a.GroupID() != user+"/"+tid {
		t.Errorf("group ids %q %q, want the item key %q", a.GroupID(), other.GroupID(), user+"/"+tid)
	}
}

var quiet = slog.New(slog.DiscardHandler)
