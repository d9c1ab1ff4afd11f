package cancel

import (
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/domain/task"
)

const (
	user = "user-1"
	tid  = "01JBQ1R8ZK3W4X5Y6Z7A8B9C0D"
)

var due = time.Date(2030, 1, 2, 15, 4, 5, 0, time.UTC)

func pending() *task.Task {
	return &task.Task{UserID: user, TaskID: tid, Title: "t", Status: task.StatusPending, DueAt: due,
		ScheduleToken: "TOKEN"}
}

func with(f func(t *task.Task)) *task.Task {
	t := pending()
	f(t)
	return t
}

func TestDecide(t *testing.T) {
	later := due.Add(time.Hour)
	cancelMsg := Message{Action: ActionCancel, UserID: user, TaskID: tid, EventID: "ev1"}
	resched := func(at time.Time) Message {
		return Message{Action: ActionReschedule, UserID: user, TaskID: tid, DueAt: at, ScheduleToken: "TOKEN", EventID: "ev1"}
	}
	done := with(func(t *task.Task) { t.Status = task.StatusDone })
	expired := with(func(t *task.Task) { t.Status = task.StatusExpired })
	tests := []struct {
		name     string
		kind     task.ChangeKind
		old, new *task.Task
		want     *Message
	}{
		{"insert", task.ChangeInsert, nil, pending(), nil},
		{"modify pending to done cancels", task.ChangeModify, pending(), done, &cancelMsg},
		{"remove of a pending task cancels", task.ChangeRemove, pending(), nil, &cancelMsg},
		{"deadline moved reschedules", task.ChangeModify, pending(), with(func(t *task.Task) { t.DueAt = later }), ptr(resched(later))},
		{"deadline moved and title edited reschedules", task.ChangeModify, pending(),
			with(func(t *task.Task) { t.DueAt = later; t.Title = "new" }), ptr(resched(later))},
		{"title only", task.ChangeModify, pending(), with(func(t *task.Task) { t.Title = "new" }), nil},
		{"description only", task.ChangeModify, pending(), with(func(t *task.Task) { t.Description = "d" }), nil},
		{"repair flag set", task.ChangeModify, pending(), with(func(t *task.Task) { t.ScheduleRepair = true }), nil},
		{"same deadline in another zone", task.ChangeModify, pending(),
			with(func(t *task.Task) { t.DueAt = due.In(time.FixedZone("x", 3600)) }), nil},
		{"pending to expired (the schedule fired)", task.ChangeModify, pending(), expired, nil},
		{"expired, notifiedAt recorded", task.ChangeModify, expired,
			with(func(t *task.Task) { t.Status = task.StatusExpired; t.NotifiedAt = due }), nil},
		{"remove of an expired task", task.ChangeRemove, expired, nil, nil},
		{"remove of a done task", task.ChangeRemove, done, nil, nil},
		{"modify of a done task", task.ChangeModify, done, with(func(t *task.Task) { t.Status = task.StatusDone; t.Title = "x" }), nil},
		// Missing images.
		{"remove without old image cancels by key", task.ChangeRemove, nil, nil, &cancelMsg},
		{"modify without old image, new done, cancels", task.ChangeModify, nil, done, &cancelMsg},
		{"modify without old image, new expired, cancels", task.ChangeModify, nil, expired, &cancelMsg},
		{"modify without old image, new pending, reschedules", task.ChangeModify, nil, pending(), ptr(resched(due))},
		{"modify without old image, new pending lacking a token", task.ChangeModify, nil,
			with(func(t *task.Task) { t.ScheduleToken = "" }), nil},
		{"modify without new image", task.ChangeModify, pending(), nil, nil},
		{"modify without any image", task.ChangeModify, nil, nil, nil},
		{"insert without image", task.ChangeInsert, nil, nil, nil},
		{"unknown kind", task.ChangeKind("TRUNCATE"), pending(), nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := task.Change{EventID: "ev1", Kind: tt.kind, UserID: user, TaskID: tid, Old: tt.old, New: tt.new}
			got, ok := Decide(c)
			if ok != (tt.want != nil) {
				t.Fatalf("Decide ok = %v, want %v (message %+v)", ok, tt.want != nil, got)
			}
			if tt.want == nil {
				return
			}
			if _, err := Parse(got.Encode()); err != nil {
				t.Errorf("decided message does not parse: %v", err)
			}
			if !got.DueAt.Equal(tt.want.DueAt) {
				t.Errorf("DueAt = %v, want %v", got.DueAt, tt.want.DueAt)
			}
			got.DueAt, tt.want.DueAt = time.Time{}, time.Time{}
			if got != *tt.want {
				t.Errorf("Decide = %+v, want %+v", got, *tt.want)
			}
		})
	}
}

func ptr(m Message) *Message { return &m }

// A replayed record (same eventID) gives the same message and so the same
// deduplication id; another record of the same transition gets another.
func TestDecideReplay(t *testing.T) {
	done := with(func(t *task.Task) { t.Status = task.StatusDone })
	c := task.Change{EventID: "ev-7", Kind: task.ChangeModify, UserID: user, TaskID: tid, Old: pending(), New: done}
	a, okA := Decide(c)
	b, okB := Decide(c)
	if !okA || !okB || a != b || a.DedupID() != b.DedupID() {
		t.Fatalf("replay decided differently: %+v %v / %+v %v", a, okA, b, okB)
	}
	c.EventID = "ev-8"
	other, _ := Decide(c)
	if other.DedupID() == a.DedupID() {
		t.Errorf("different records share dedup id %q", a.DedupID())
	}
	if a.GroupID() != other.GroupID() || a.GroupID() != tid {
		t.Errorf("group ids %q %q, want the task id %q", a.GroupID(), other.GroupID(), tid)
	}
}

var quiet = slog.New(slog.DiscardHandler)
