package cancel

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timer"
)

var errThrottled = errors.New("ThrottlingException: rate exceeded")

// refusedErr is a refusal no retry can change, as an timer
// reports one (awssfn: a due time beyond its horizon).
type refusedErr struct{}

func (refusedErr) Error() string   { return "due time beyond the horizon" }
func (refusedErr) Permanent() bool { return true }

var errRefused error = refusedErr{}

func TestWorkerHandle(t *testing.T) {
	later := due.Add(time.Hour)
	cancelMsg := Message{Action: ActionCancel, Partition: user, Sort: tid, EventID: "e1"}
	reschedMsg := Message{Action: ActionReschedule, Partition: user, Sort: tid, DueAt: later, Token: "TOKEN", EventID: "e2"}
	schedMsg := Message{Action: ActionSchedule, Partition: user, Sort: tid, DueAt: due, Token: "TOKEN", EventID: "e3"}
	old := schema.ScheduleFor(*pending())
	moved := reschedMsg.Schedule(schema)
	other := old
	other.ClientToken = "someone-else"
	tests := []struct {
		name      string
		existing  *contract.Schedule
		fail      func(op, name string) error
		msg       Message
		wantErr   bool
		malformed bool
		want      *contract.Schedule // the schedule after, nil for none
		metric    string
	}{
		{"cancel deletes", &old, nil, cancelMsg, false, false, nil, MetricCancelled},
		{"cancel of a missing schedule succeeds", nil, nil, cancelMsg, false, false, nil, MetricAlreadyGone},
		{"cancel throttled is retryable", &old, failOn("Disarm", errThrottled), cancelMsg, true, false, &old, MetricRetryable},
		{"reschedule moves", &old, nil, reschedMsg, false, false, &moved, MetricRescheduled},
		{"reschedule after the old one fired recreates", nil, nil, reschedMsg, false, false, &moved, MetricRecreated},
		{"reschedule racing another create succeeds", &other, failOn("Move", timer.ErrNotFound), reschedMsg,
			false, false, &other, MetricRecreated},
		{"reschedule throttled is retryable", &old, failOn("Move", errThrottled), reschedMsg, true, false, &old, MetricRetryable},
		{"recreate failing is retryable", nil, failOn("Arm", errThrottled), reschedMsg, true, false, nil, MetricRetryable},
		{"schedule creates the item's schedule", nil, nil, schedMsg, false, false, &old, MetricScheduleCreated},
		{"schedule retried after its create is a success", &old, nil, schedMsg, false, false, &old, MetricScheduleCreated},
		{"schedule over another create moves it", &other, nil, schedMsg, false, false, &old, MetricScheduleCreated},
		{"schedule throttled is retryable", nil, failOn("Arm", errThrottled), schedMsg, true, false, nil, MetricRetryable},
		{"schedule refused for good is acknowledged", nil, failOn("Arm", errRefused), schedMsg, false, false, nil, MetricRefused},
		{"reschedule refused for good is acknowledged", &old, failOn("Move", fmt.Errorf("stop: %w", errRefused)), reschedMsg,
			false, false, &old, MetricRefused},
		{"malformed message is permanent", &old, nil, Message{Action: "explode", Partition: user, Sort: tid}, true, true, &old, MetricMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := inmem.NewScheduler()
			if tt.existing != nil {
				if err := s.Arm(context.Background(), *tt.existing); err != nil {
					t.Fatal(err)
				}
			}
			s.Fail = tt.fail
			var out bytes.Buffer
			rec := metrics.New("cancelworker", &out)
			w, err := NewWorker(schema, s, rec, quiet)
			if err != nil {
				t.Fatal(err)
			}
			err = w.Handle(context.Background(), tt.msg)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Handle err = %v, wantErr %v", err, tt.wantErr)
			}
			if errors.Is(err, ErrMalformed) != tt.malformed {
				t.Errorf("malformed = %v, want %v (%v)", !tt.malformed, tt.malformed, err)
			}
			got, ok := s.Lookup(schema.ScheduleName(contract.Key{Partition: user, Sort: tid}))
			switch {
			case tt.want == nil && ok:
				t.Errorf("schedule %+v left, want none", got)
			case tt.want != nil && (!ok || got != *tt.want):
				t.Errorf("schedule = %+v (present %v), want %+v", got, ok, *tt.want)
			}
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), `"`+tt.metric+`":1`) {
				t.Errorf("metrics %s lack %s=1", out.String(), tt.metric)
			}
		})
	}
}

func failOn(op string, err error) func(string, string) error {
	return func(o, _ string) error {
		if o == op {
			return err
		}
		return nil
	}
}

// Processing any message twice leaves the scheduler as processing it once,
// without an error.
func TestWorkerHandleTwice(t *testing.T) {
	later := due.Add(time.Hour)
	msgs := []Message{
		{Action: ActionCancel, Partition: user, Sort: tid, EventID: "e1"},
		{Action: ActionReschedule, Partition: user, Sort: tid, DueAt: later, Token: "TOKEN", EventID: "e2"},
		{Action: ActionSchedule, Partition: user, Sort: tid, DueAt: due, Token: "TOKEN", EventID: "e3"},
	}
	for _, m := range msgs {
		for _, start := range []string{"with a schedule", "without a schedule"} {
			t.Run(string(m.Action)+" "+start, func(t *testing.T) {
				s := inmem.NewScheduler()
				if start == "with a schedule" {
					_ = s.Arm(context.Background(), schema.ScheduleFor(*pending()))
				}
				w, _ := NewWorker(schema, s, nil, quiet)
				if err := w.Handle(context.Background(), m); err != nil {
					t.Fatal(err)
				}
				once := s.All()
				if err := w.Handle(context.Background(), m); err != nil {
					t.Fatalf("second Handle: %v", err)
				}
				if twice := s.All(); !slices.Equal(once, twice) {
					t.Errorf("after twice %+v, after once %+v", twice, once)
				}
			})
		}
	}
}

func TestWorkerHandleBatch(t *testing.T) {
	const tidB = "01JBQ1R8ZK3W4X5Y6Z7A8B9C0E"
	body := func(taskID, ev string) []byte {
		return Message{Action: ActionCancel, Partition: user, Sort: taskID, EventID: ev}.Encode()
	}
	tests := []struct {
		name       string
		failDelete string // schedule name whose Disarm is throttled
		batch      []Delivery
		want       []string
	}{
		{"all succeed", "", []Delivery{{"1", tid, body(tid, "a")}, {"2", tidB, body(tidB, "b")}}, nil},
		{"failure holds back its group only", schema.ScheduleName(contract.Key{Partition: user, Sort: tid}), []Delivery{
			{"1", tid, body(tid, "a")}, {"2", tidB, body(tidB, "b")}, {"3", tid, body(tid, "c")}, {"4", tidB, body(tidB, "d")},
		}, []string{"1", "3"}},
		{"malformed body fails and holds back its group", "", []Delivery{
			{"1", tid, []byte("{")}, {"2", tid, body(tid, "b")}, {"3", tidB, body(tidB, "c")},
		}, []string{"1", "2"}},
		{"unknown group holds back everything after", schema.ScheduleName(contract.Key{Partition: user, Sort: tid}), []Delivery{
			{"1", "", body(tid, "a")}, {"2", tidB, body(tidB, "b")},
		}, []string{"1", "2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := inmem.NewScheduler()
			s.Fail = func(op, name string) error {
				if op == "Disarm" && name == tt.failDelete {
					return errThrottled
				}
				return nil
			}
			w, _ := NewWorker(schema, s, nil, quiet)
			if got := w.HandleBatch(context.Background(), tt.batch); !slices.Equal(got, tt.want) {
				t.Errorf("failed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNewWorkerNeedsScheduler(t *testing.T) {
	if _, err := NewWorker(schema, nil, nil, quiet); err == nil {
		t.Error("NewWorker(nil) succeeded")
	}
}

// fromRecorder records the due time each Move and Disarm is handed (the
// time the old schedule was made for), by schedule name.
type fromRecorder struct {
	*inmem.Scheduler
	got map[string]string
}

func (r fromRecorder) Move(ctx context.Context, s contract.Schedule, from time.Time) error {
	r.got["Update "+s.Name] = contract.FormatTime(from)
	return r.Scheduler.Move(ctx, s, from)
}

func (r fromRecorder) Disarm(ctx context.Context, name string, at time.Time) error {
	r.got["Delete "+name] = contract.FormatTime(at)
	return r.Scheduler.Disarm(ctx, name, at)
}

// The worker hands the scheduler the old image's due and reminder times
// (the Step Functions timer stops the execution they name).
func TestWorkerPassesTheOldTimes(t *testing.T) {
	rem, oldRem := due.Add(-time.Hour), due.Add(-2*time.Hour)
	later := due.Add(time.Hour)
	main, reminder := schema.ScheduleName(contract.Key{Partition: user, Sort: tid}), schema.ReminderName(contract.Key{Partition: user, Sort: tid})
	for _, tc := range []struct {
		name string
		msg  Message
		want map[string]string
	}{
		{"cancel", Message{Action: ActionCancel, Partition: user, Sort: tid, OldDueAt: due, OldRemindAt: oldRem, EventID: "e"},
			map[string]string{"Delete " + main: contract.FormatTime(due), "Delete " + reminder: contract.FormatTime(oldRem)}},
		{"cancel without an old image", Message{Action: ActionCancel, Partition: user, Sort: tid, EventID: "e"},
			map[string]string{"Delete " + main: contract.FormatTime(time.Time{}), "Delete " + reminder: contract.FormatTime(time.Time{})}},
		{"reschedule", Message{Action: ActionReschedule, Partition: user, Sort: tid, DueAt: later, RemindAt: rem,
			OldDueAt: due, OldRemindAt: oldRem, Token: "TOKEN", EventID: "e"},
			map[string]string{"Update " + main: contract.FormatTime(due), "Update " + reminder: contract.FormatTime(oldRem)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fromRecorder{inmem.NewScheduler(), map[string]string{}}
			w, _ := NewWorker(schema, r, nil, quiet)
			w.SetClock(func() time.Time { return due.Add(-3 * time.Hour) })
			if err := w.Handle(context.Background(), tc.msg); err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(r.got) != fmt.Sprint(tc.want) {
				t.Fatalf("scheduler was handed %v; want %v", r.got, tc.want)
			}
		})
	}
}
