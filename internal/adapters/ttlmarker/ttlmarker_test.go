package ttlmarker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/testenv"
)

// The marker adapter against dynalite: the task.Scheduler contract the
// worker relies on (a retried create succeeds, another payload is
// ErrScheduleExists, moving or cancelling nothing is ErrScheduleNotFound).
func TestMarkersOnDynalite(t *testing.T) {
	db := testenv.DynamoClient(t, testenv.StartDynalite(t))
	s := testenv.ConsumerSchema()
	testenv.CreateItemTable(t, db, "items", s)
	c, err := ttlmarker.New(db, ttlmarker.Config{Table: "items", Schema: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	k := contract.Key{Partition: "t1", Sort: "j1"}
	at := func(d time.Time) task.Schedule { return s.ScheduleFor(contract.Item{Key: k, Due: d}) }
	for i, step := range []struct {
		name string
		do   func() error
		want error
	}{
		{"move before any marker", func() error { return c.Update(ctx, at(due), time.Time{}) }, task.ErrScheduleNotFound},
		{"create", func() error { return c.Create(ctx, at(due)) }, nil},
		{"retried create", func() error { return c.Create(ctx, at(due)) }, nil},
		{"create for another due time", func() error { return c.Create(ctx, at(due.Add(time.Hour))) }, task.ErrScheduleExists},
		{"move", func() error { return c.Update(ctx, at(due.Add(time.Hour)), due) }, nil},
		{"cancel", func() error { return c.Delete(ctx, at(due).Name, due.Add(time.Hour)) }, nil},
		{"cancel again", func() error { return c.Delete(ctx, at(due).Name, due.Add(time.Hour)) }, task.ErrScheduleNotFound},
		{"move after the cancel", func() error { return c.Update(ctx, at(due), due.Add(time.Hour)) }, task.ErrScheduleNotFound},
	} {
		if err := step.do(); !errors.Is(err, step.want) || (step.want == nil && err != nil) {
			t.Fatalf("step %d %s: %v, want %v", i, step.name, err, step.want)
		}
	}
}
