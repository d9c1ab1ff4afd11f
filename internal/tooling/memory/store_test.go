package memory

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// TestStoreFailStopsEachOpByName pins the fault-injection points: every
// operation asks Fail under its own name first, and an injected error is
// returned as is, with nothing written.
func TestStoreFailStopsEachOpByName(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	due := now.Add(time.Hour)
	title := "renamed"
	for _, tc := range []struct {
		op  string
		run func(s *Store) error
	}{
		{"Create", func(s *Store) error {
			return s.Create(ctx, task.Task{UserID: "u", TaskID: "t2", Status: task.StatusPending, DueAt: due})
		}},
		{"Get", func(s *Store) error { _, err := s.Get(ctx, "u", "t1"); return err }},
		{"List", func(s *Store) error { _, err := s.List(ctx, "u", timer.PageRequest{}); return err }},
		{"CountUserPending", func(s *Store) error { _, err := s.CountUserPending(ctx, "u", 0); return err }},
		{"ListPending", func(s *Store) error { _, err := s.ListPending(ctx, task.PendingRequest{}); return err }},
		{"CountPending", func(s *Store) error { _, err := s.CountPending(ctx, task.PendingRequest{}); return err }},
		{"UpdatePending", func(s *Store) error {
			_, err := s.UpdatePending(ctx, "u", "t1", task.Patch{Title: &title}, now)
			return err
		}},
		{"Delete", func(s *Store) error { _, err := s.Delete(ctx, "u", "t1"); return err }},
		{"Expire", func(s *Store) error { _, err := s.Expire(ctx, "u", "t1", due, due); return err }},
		{"ClaimNotification", func(s *Store) error {
			return s.ClaimNotification(ctx, "u", "t1", due, due, time.Minute)
		}},
		{"MarkNotified", func(s *Store) error { return s.MarkNotified(ctx, "u", "t1", due) }},
		{"ClaimReminder", func(s *Store) error {
			_, err := s.ClaimReminder(ctx, "u", "t1", due, now, now, time.Minute)
			return err
		}},
		{"MarkReminded", func(s *Store) error { return s.MarkReminded(ctx, "u", "t1", now) }},
		{"SetScheduleRepair", func(s *Store) error { return s.SetScheduleRepair(ctx, "u", "t1", true) }},
		{"MarkScheduled", func(s *Store) error { return s.MarkScheduled(ctx, "u", "t1", due) }},
	} {
		t.Run(tc.op, func(t *testing.T) {
			s := NewStore()
			stored := task.Task{UserID: "u", TaskID: "t1", Status: task.StatusPending, DueAt: due, CreatedAt: now, UpdatedAt: now}
			s.Put(stored)
			injected := errors.New("injected")
			var asked []string
			s.Fail = func(op string) error {
				asked = append(asked, op)
				if op == tc.op {
					return injected
				}
				return nil
			}
			if err := tc.run(s); !errors.Is(err, injected) {
				t.Fatalf("%s returned %v, want the injected error", tc.op, err)
			}
			if len(asked) != 1 || asked[0] != tc.op {
				t.Errorf("Fail was asked %q, want only %q", asked, tc.op)
			}
			if got := s.All(); len(got) != 1 || got[0] != stored {
				t.Errorf("the store holds %+v after a failed %s, want only %+v", got, tc.op, stored)
			}
			if changes, _ := s.Changes(0); len(changes) != 0 {
				t.Errorf("a failed %s recorded %d changes", tc.op, len(changes))
			}
		})
	}
}

// TestStoreRefusesAnEmptyIndexKey: DynamoDB refuses an item whose index
// key attribute is an empty string, so a task without a due time (the
// pending index's sort key) is refused here too, with nothing written.
func TestStoreRefusesAnEmptyIndexKey(t *testing.T) {
	s := NewStore()
	err := s.Create(context.Background(), task.Task{UserID: "u", TaskID: "t1", Status: task.StatusPending})
	if !errors.Is(err, inmem.ErrEmptyIndexKey) {
		t.Fatalf("Create of a task without a due time: %v, want inmem.ErrEmptyIndexKey", err)
	}
	if got := s.All(); len(got) != 0 {
		t.Errorf("the store holds %+v after a refused Create", got)
	}
	if changes, _ := s.Changes(0); len(changes) != 0 {
		t.Errorf("a refused Create recorded %d changes", len(changes))
	}
}
