package campaign_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/domain/timer"
)

// TestSchedulesSpeakTheTimerPorts: the core's timer calls on campaign
// schedules, named camp-<taskId>, made from the task as stored.
func TestSchedulesSpeakTheTimerPorts(t *testing.T) {
	ctx := context.Background()
	e := newRepairEnv(t, noon, campaign.Active, pending(noon.Add(time.Hour)))
	task := e.task(t, 0)
	s := campaign.Schedules{Tasks: e.st, Scheduler: e.sched, Target: repairTgt}
	name := s.ScheduleName(campaign.ItemKey(task.Key()))
	want := timer.Schedule{Name: name, At: task.SendAt, Payload: task.Payload()}
	steps := []struct {
		name  string
		do    func() error
		isErr error
		token string // the live schedule's ClientToken after ("" none)
	}{
		{"get before create: not found", func() error { _, err := s.Get(ctx, name, task.SendAt); return err }, timer.ErrNotFound, ""},
		{"delete before create: not found", func() error { return s.Delete(ctx, name, task.SendAt) }, timer.ErrNotFound, ""},
		{"create: the task's request", func() error { return s.Create(ctx, want) }, nil, "tok-0"},
		{"create again, same token: success", func() error { return s.Create(ctx, want) }, nil, "tok-0"},
		{"get: found at the time asked", func() error {
			got, err := s.Get(ctx, name, task.SendAt)
			if err == nil && !got.At.Equal(task.SendAt) {
				t.Errorf("got %+v", got)
			}
			return err
		}, nil, "tok-0"},
		{"update after a retime: made again with the new token", func() error {
			moved, err := campaign.Retime(task, noon.Add(25*time.Hour), "2026-06-02T12:00:00", noon)
			if err == nil {
				err = e.st.Replace(ctx, task, moved)
			}
			if err != nil {
				return err
			}
			return s.Update(ctx, timer.Schedule{Name: name, At: moved.SendAt, Payload: moved.Payload()}, task.SendAt)
		}, nil, "tok-0-r1"},
		{"delete", func() error { return s.Delete(ctx, name, time.Time{}) }, nil, ""},
	}
	if name != "camp-c1-00000" {
		t.Fatalf("name %q", name)
	}
	for _, st := range steps {
		err := st.do()
		if (st.isErr == nil && err != nil) || (st.isErr != nil && !errors.Is(err, st.isErr)) {
			t.Fatalf("%s: %v, want %v", st.name, err, st.isErr)
		}
		live, ok := e.sched.Schedules()[name]
		if (st.token == "") == ok || (ok && live.ClientToken != st.token) {
			t.Fatalf("%s: live %v %+v, want token %q", st.name, ok, live, st.token)
		}
	}
}
