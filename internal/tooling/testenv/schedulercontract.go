package testenv

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// ContractScheduler is what SchedulerContract tests: the scheduler port
// with the reconciler's read view.
type ContractScheduler = interface {
	timer.Timer
	timer.Reader
}

// SchedulerBackend is one implementation under SchedulerContract.
type SchedulerBackend struct {
	// New returns a scheduler on an empty schedule group.
	New func(t *testing.T) ContractScheduler
	// Moto marks the AWS adapter on moto's server, whose known gaps the
	// contract skips with their reason.
	Moto bool
}

// ContractSchedule is the schedule of ContractTask(user, n).
func ContractSchedule(user string, n int) contract.Schedule {
	return task.ScheduleFor(ContractTask(user, n))
}

// SchedulerContract is the behaviour every timer.Timer must share with
// EventBridge Scheduler: the memory scheduler that drives the simulation
// and `make dev`, and the AWS adapter against moto, both run it.
func SchedulerContract(t *testing.T, b SchedulerBackend) {
	ctx := context.Background()
	mustCreate := func(t *testing.T, s ContractScheduler, scs ...contract.Schedule) {
		t.Helper()
		for _, sc := range scs {
			if err := s.Arm(ctx, sc); err != nil {
				t.Fatalf("create %s: %v", sc.Name, err)
			}
		}
	}
	// readable is what Get gives back: GetSchedule does not return a
	// schedule's client token.
	// https://docs.aws.amazon.com/scheduler/latest/APIReference/API_GetSchedule.html
	readable := func(sc contract.Schedule) contract.Schedule { sc.ClientToken = ""; return sc }
	wantGet := func(t *testing.T, s ContractScheduler, want contract.Schedule) {
		t.Helper()
		got, err := s.Get(ctx, want.Name, want.At)
		if err != nil {
			t.Fatalf("get %s: %v", want.Name, err)
		}
		if !reflect.DeepEqual(got, readable(want)) {
			t.Fatalf("get %s:\n got %+v\nwant %+v", want.Name, got, readable(want))
		}
	}
	wantErr := func(t *testing.T, what string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Fatalf("%s: error = %v, want %v", what, err, want)
		}
	}
	listAll := func(t *testing.T, s ContractScheduler, limit int) []string {
		t.Helper()
		var names []string
		page := task.PageRequest{Limit: limit}
		for range 100 {
			p, err := s.List(ctx, page)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if len(p.Schedules) > limit {
				t.Fatalf("list: a page of %d with limit %d", len(p.Schedules), limit)
			}
			for _, sc := range p.Schedules {
				// ListSchedules returns summaries, without the target
				// input: a caller that needs At or Payload calls Get.
				// https://docs.aws.amazon.com/scheduler/latest/APIReference/API_ListSchedules.html
				if !reflect.DeepEqual(sc, contract.Schedule{Name: sc.Name}) {
					t.Fatalf("list: %+v has more than its name", sc)
				}
				names = append(names, sc.Name)
			}
			if p.Cursor == "" {
				slices.Sort(names)
				return names
			}
			page.Cursor = p.Cursor
		}
		t.Fatal("list: no last page after 100 pages")
		return nil
	}

	t.Run("create then get returns the schedule", func(t *testing.T) {
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		mustCreate(t, s, sc)
		wantGet(t, s, sc)
	})

	t.Run("create retried with the same client token succeeds and keeps one schedule", func(t *testing.T) {
		if b.Moto {
			// moto 5.2.1 does not implement ClientToken (its
			// create_schedule docstring says so) and answers
			// ConflictException. EventBridge Scheduler documents the
			// token as what makes a retried create idempotent:
			// https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
			t.Skip("moto gap: CreateSchedule ignores ClientToken, so a retry is a ConflictException")
		}
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		mustCreate(t, s, sc, sc)
		wantGet(t, s, sc)
		if got := listAll(t, s, 10); !reflect.DeepEqual(got, []string{sc.Name}) {
			t.Fatalf("list = %v, want only %s", got, sc.Name)
		}
	})

	t.Run("create without a client token twice is ErrScheduleExists", func(t *testing.T) {
		// "If you do not specify a client token, EventBridge Scheduler
		// uses a randomly generated token for the request": two creates
		// without one are two requests, not a retry.
		// https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		sc.ClientToken = ""
		mustCreate(t, s, sc)
		wantErr(t, "second create", s.Arm(ctx, sc), timer.ErrExists)
	})

	t.Run("create of a taken name with another token is ErrScheduleExists and keeps the first", func(t *testing.T) {
		s := b.New(t)
		first := ContractSchedule("alice", 1)
		mustCreate(t, s, first)
		other := first
		other.ClientToken = first.ClientToken + "-other"
		other.At = first.At.Add(time.Hour)
		other.Payload.Due = other.At
		wantErr(t, "second create", s.Arm(ctx, other), timer.ErrExists)
		wantGet(t, s, first)
	})

	t.Run("update moves the schedule", func(t *testing.T) {
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		mustCreate(t, s, sc)
		moved := ContractSchedule("alice", 1)
		moved.At = sc.At.Add(36 * time.Hour)
		moved.Payload.Due = moved.At
		if err := s.Move(ctx, moved, sc.At); err != nil {
			t.Fatalf("update: %v", err)
		}
		wantGet(t, s, moved)
	})

	for _, tc := range []struct {
		name string
		op   func(s ContractScheduler, name string) error
	}{
		{"update", func(s ContractScheduler, name string) error {
			sc := ContractSchedule("alice", 1)
			sc.Name = name
			return s.Move(ctx, sc, sc.At.Add(-time.Hour))
		}},
		{"delete", func(s ContractScheduler, name string) error {
			return s.Disarm(ctx, name, ContractSchedule("alice", 1).At)
		}},
		{"get", func(s ContractScheduler, name string) error { _, err := s.Get(ctx, name, time.Time{}); return err }},
	} {
		t.Run(tc.name+" of a missing schedule is ErrScheduleNotFound", func(t *testing.T) {
			s := b.New(t)
			mustCreate(t, s, ContractSchedule("alice", 2))
			wantErr(t, tc.name, tc.op(s, ContractSchedule("alice", 1).Name), timer.ErrNotFound)
		})
	}

	t.Run("delete removes only that schedule, and a second delete is ErrScheduleNotFound", func(t *testing.T) {
		s := b.New(t)
		gone, kept := ContractSchedule("alice", 1), ContractSchedule("alice", 2)
		mustCreate(t, s, gone, kept)
		if err := s.Disarm(ctx, gone.Name, gone.At); err != nil {
			t.Fatalf("delete: %v", err)
		}
		wantErr(t, "get after delete", errOf(s.Get(ctx, gone.Name, gone.At)), timer.ErrNotFound)
		wantErr(t, "second delete", s.Disarm(ctx, gone.Name, gone.At), timer.ErrNotFound)
		wantGet(t, s, kept)
	})

	t.Run("a deleted name can be created again", func(t *testing.T) {
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		mustCreate(t, s, sc)
		if err := s.Disarm(ctx, sc.Name, sc.At); err != nil {
			t.Fatalf("delete: %v", err)
		}
		again := sc
		again.ClientToken = sc.ClientToken + "-again"
		again.At = sc.At.Add(time.Hour)
		again.Payload.Due = again.At
		mustCreate(t, s, again)
		wantGet(t, s, again)
	})

	for _, limit := range []int{1, 2, 3, 100} {
		t.Run("list pages through the task schedules only, limit "+strconv.Itoa(limit), func(t *testing.T) {
			s := b.New(t)
			var want []string
			for n := 1; n <= 5; n++ {
				sc := ContractSchedule("user"+strconv.Itoa(n%2), n)
				mustCreate(t, s, sc)
				want = append(want, sc.Name)
			}
			foreign := ContractSchedule("alice", 9)
			foreign.Name = "not-a-task-" + ContractID(9)
			mustCreate(t, s, foreign)
			slices.Sort(want)
			if got := listAll(t, s, limit); !reflect.DeepEqual(got, want) {
				t.Fatalf("list:\n got %v\nwant %v", got, want)
			}
		})
	}

	t.Run("list of an empty group is one empty last page", func(t *testing.T) {
		s := b.New(t)
		p, err := s.List(ctx, task.PageRequest{Limit: 10})
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		if len(p.Schedules) != 0 || p.Cursor != "" {
			t.Fatalf("list = %+v, want no schedules and no cursor", p)
		}
	})
}

// ReaderBackend is one timer under ReaderContract.
type ReaderBackend struct {
	// New returns the timer, holding nothing, on the to-do app's schema
	// (ContractSchedule), its clock before the contract's due times.
	New func(t *testing.T) ContractScheduler
	// NamedByDueTime marks a timer that names a schedule by its due time
	// (Step Functions): Get without one is ErrScheduleNotFound.
	NamedByDueTime bool
}

// ReaderContract is the read view every timer gives the reconciler
// (timer.Reader): Get reads back what Arm armed, given its due time,
// and nothing once it is disarmed; List pages through every armed
// schedule, each entry by name, with the due time and payload it carries
// (a listing may leave them out, never get them wrong). The memory
// stand-ins and the Step Functions (moto) and TTL (dynalite) adapters run
// it.
func ReaderContract(t *testing.T, b ReaderBackend) {
	ctx := context.Background()
	readable := func(sc contract.Schedule) contract.Schedule { sc.ClientToken = ""; return sc }
	arm := func(t *testing.T, s ContractScheduler, scs ...contract.Schedule) {
		t.Helper()
		for _, sc := range scs {
			if err := s.Arm(ctx, sc); err != nil {
				t.Fatalf("create %s: %v", sc.Name, err)
			}
		}
	}
	wantGet := func(t *testing.T, s ContractScheduler, at time.Time, want contract.Schedule) {
		t.Helper()
		got, err := s.Get(ctx, want.Name, at)
		if err != nil || !reflect.DeepEqual(got, readable(want)) {
			t.Fatalf("get %s at %v = %+v, %v; want %+v", want.Name, at, got, err, readable(want))
		}
	}
	wantNotFound := func(t *testing.T, s ContractScheduler, name string, at time.Time) {
		t.Helper()
		if got, err := s.Get(ctx, name, at); !errors.Is(err, timer.ErrNotFound) {
			t.Fatalf("get %s at %v = %+v, %v; want ErrScheduleNotFound", name, at, got, err)
		}
	}
	// wantListed pages through the listing and checks it holds want, one
	// entry each (At and Payload as armed, or left out).
	wantListed := func(t *testing.T, s ContractScheduler, limit int, want ...contract.Schedule) {
		t.Helper()
		var got []contract.Schedule
		page := task.PageRequest{Limit: limit}
		for range 100 {
			p, err := s.List(ctx, page)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if len(p.Schedules) > limit {
				t.Fatalf("list: a page of %d with limit %d", len(p.Schedules), limit)
			}
			got = append(got, p.Schedules...)
			if page.Cursor = p.Cursor; p.Cursor == "" {
				break
			}
		}
		byName := func(a, b contract.Schedule) int { return strings.Compare(a.Name, b.Name) }
		slices.SortFunc(got, byName)
		want = slices.Clone(want)
		slices.SortFunc(want, byName)
		if len(got) != len(want) {
			t.Fatalf("listed %+v; want %+v", got, want)
		}
		for i, g := range got {
			w := want[i]
			if g.Name != w.Name || (!g.At.IsZero() && !g.At.Equal(w.At)) ||
				(!g.Payload.IsZero() && !g.Payload.Equal(w.Payload)) || g.ClientToken != "" {
				t.Fatalf("listed %+v; want %+v (At and Payload may be left out)", g, readable(w))
			}
		}
	}

	t.Run("get reads back what create armed", func(t *testing.T) {
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		arm(t, s, sc)
		wantGet(t, s, sc.At, sc)
		if b.NamedByDueTime {
			wantNotFound(t, s, sc.Name, time.Time{})
		} else {
			wantGet(t, s, time.Time{}, sc)
		}
	})

	t.Run("get of nothing armed is ErrScheduleNotFound", func(t *testing.T) {
		s := b.New(t)
		sc, other := ContractSchedule("alice", 1), ContractSchedule("alice", 2)
		arm(t, s, other)
		wantNotFound(t, s, sc.Name, sc.At)
	})

	t.Run("get after delete is ErrScheduleNotFound, and the listing leaves it out", func(t *testing.T) {
		s := b.New(t)
		gone, kept := ContractSchedule("alice", 1), ContractSchedule("alice", 2)
		arm(t, s, gone, kept)
		if err := s.Disarm(ctx, gone.Name, gone.At); err != nil {
			t.Fatalf("delete: %v", err)
		}
		wantNotFound(t, s, gone.Name, gone.At)
		wantListed(t, s, 10, kept)
	})

	t.Run("armed again after a delete, as often as a reconciler re-arms: read and listed once", func(t *testing.T) {
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		for range 2 { // the second round re-arms what a delete of a re-arm stopped
			arm(t, s, sc)
			if err := s.Disarm(ctx, sc.Name, sc.At); err != nil {
				t.Fatalf("delete: %v", err)
			}
			wantNotFound(t, s, sc.Name, sc.At)
			arm(t, s, sc, sc, sc)
			wantGet(t, s, sc.At, sc)
			wantListed(t, s, 10, sc)
			if err := s.Disarm(ctx, sc.Name, sc.At); err != nil {
				t.Fatalf("delete of the re-armed: %v", err)
			}
			wantListed(t, s, 10)
		}
	})

	t.Run("a move is read and listed at its new due time", func(t *testing.T) {
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		arm(t, s, sc)
		moved := ContractSchedule("alice", 1)
		moved.At = sc.At.Add(36 * time.Hour)
		moved.Payload.Due = moved.At
		if err := s.Move(ctx, moved, sc.At); err != nil {
			t.Fatalf("update: %v", err)
		}
		wantGet(t, s, moved.At, moved)
		wantListed(t, s, 10, moved)
	})

	for _, limit := range []int{1, 2, 100} {
		t.Run("list pages through every armed schedule, limit "+strconv.Itoa(limit), func(t *testing.T) {
			s := b.New(t)
			var want []contract.Schedule
			for n := 1; n <= 5; n++ {
				sc := ContractSchedule("user"+strconv.Itoa(n%2), n)
				arm(t, s, sc)
				want = append(want, sc)
			}
			wantListed(t, s, limit, want...)
		})
	}

	t.Run("list of nothing armed is one empty last page", func(t *testing.T) {
		s := b.New(t)
		p, err := s.List(ctx, task.PageRequest{Limit: 10})
		if err != nil || len(p.Schedules) != 0 || p.Cursor != "" {
			t.Fatalf("list = %+v, %v; want no schedules and no cursor", p, err)
		}
	})
}
