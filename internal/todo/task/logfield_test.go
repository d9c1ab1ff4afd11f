package task_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/logfield/logfieldtest"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// TestFailedCreateLineCarriesTheKey: the to-do app's line for a failed
// schedule create names its task in logfield.Key, the field unschedule
// why --logs filters on (the core's outcome lines are
// internal/core/logfield's test).
func TestFailedCreateLineCarriesTheKey(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	const user, id = "user-1", "01JD0000000000000000000041"
	log, c := logfieldtest.New()
	sched := inmem.NewScheduler()
	sched.Fail = func(string, string) error { return errors.New("throttled") }
	svc, err := task.NewService(task.Deps{Store: memory.NewStore(), Timer: sched, Clock: clock.NewFake(now),
		IDs: fixedID(id), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Create(context.Background(), user, task.NewTask{Title: "t", DueAt: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	c.RequireKey(t, "schedule create failed; task marked for repair", contract.Key{Partition: user, Sort: id}.String())
}

// fixedID gives every task the same id.
type fixedID string

func (f fixedID) NewID(time.Time) string { return string(f) }
func (fixedID) NewToken() string         { return "tok" }
