// Package timertest is the conformance suite of the timer port
// (timer.Timer and timer.Reader), as testing/fstest is of fs.FS: every
// timer runs TimerContract, and every reader ReaderContract, on the
// fixture schedules of a core-only Schema. It imports the core alone, so
// a timer's tests compile no adopter; the caller passes the timer.
package timertest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/suitecheck"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// ContractTimer is what TimerContract and ReaderContract test: the timer
// port with the reconciler's read view.
type ContractTimer = interface {
	timer.Timer
	timer.Reader
}

// TimerBackend is one implementation under TimerContract.
type TimerBackend struct {
	// New returns a timer holding nothing (an empty schedule group).
	New func(t *testing.T) ContractTimer
	// Moto marks the AWS adapter on moto's server, whose known gaps the
	// contract skips with their reason.
	Moto bool
}

// Schema is the fixture's schema: an item table keyed by owner and item
// id, named by sort key, whose state attribute is the reserved word
// "status", with every optional attribute (claim, delivery, reminders)
// set. A timer under the contract is configured with it.
var Schema = contract.Schema{
	PartitionKey: "owner", SortKey: "itemId", DueAttr: "dueAt", StateAttr: "status",
	ArmedStates: []string{"Pending"}, FiredState: "Fired",
	FiredAtAttr: "firedAt", ClaimAtAttr: "claimAt", DeliveredAtAttr: "deliveredAt",
	ScheduleNamePrefix: "item-", NameBySortKey: true,
	RemindAttr: "remindAt", RemindClaimAtAttr: "remindClaimAt", RemindedAttr: "remindedFor",
	ReminderNamePrefix: "remind-", ReservedSortKeyPrefix: "#",
}.WithDefaults()

// T0 is the fixture's reference instant (UTC, whole seconds): ContractItem
// n is due n hours after it.
var T0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// ContractID is an item id that sorts by n and is safe in a schedule name.
func ContractID(n int) string { return fmt.Sprintf("item%06d", n) }

// ContractItem is an armed item of owner with id ContractID(n), due n
// hours after T0, with a token of its own.
func ContractItem(owner string, n int) contract.Item {
	return contract.Item{Key: contract.Key{Partition: owner, Sort: ContractID(n)}, State: "Pending",
		Due: T0.Add(time.Duration(n) * time.Hour), Token: "token-" + ContractID(n)}
}

// ContractSchedule is the schedule of ContractItem(owner, n).
func ContractSchedule(owner string, n int) contract.Schedule {
	return Schema.ScheduleFor(ContractItem(owner, n))
}

// The checks TimerContract and ReaderContract share.

// readable is what Get gives back: GetSchedule does not return a
// schedule's client token.
// https://docs.aws.amazon.com/scheduler/latest/APIReference/API_GetSchedule.html
func readable(sc contract.Schedule) contract.Schedule { sc.ClientToken = ""; return sc }

// dueAt is sc for the due time at.
func dueAt(sc contract.Schedule, at time.Time) contract.Schedule {
	sc.At, sc.Payload.Due = at, at
	return sc
}

func arm(t *testing.T, s ContractTimer, scs ...contract.Schedule) {
	t.Helper()
	for _, sc := range scs {
		if err := s.Arm(context.Background(), sc); err != nil {
			t.Fatalf("arm %s: %v", sc.Name, err)
		}
	}
}

func wantGet(t *testing.T, s ContractTimer, at time.Time, want contract.Schedule) {
	t.Helper()
	got, err := s.Get(context.Background(), want.Name, at)
	if err != nil || !reflect.DeepEqual(got, readable(want)) {
		t.Fatalf("get %s at %v = %+v, %v; want %+v", want.Name, at, got, err, readable(want))
	}
}

func wantNotFound(t *testing.T, s ContractTimer, name string, at time.Time) {
	t.Helper()
	if got, err := s.Get(context.Background(), name, at); !errors.Is(err, timer.ErrNotFound) {
		t.Fatalf("get %s at %v = %+v, %v; want timer.ErrNotFound", name, at, got, err)
	}
}

// listAll pages through the listing, limit a page, and returns every
// entry by name.
func listAll(t *testing.T, s ContractTimer, limit int) []contract.Schedule {
	t.Helper()
	var got []contract.Schedule
	page := timer.PageRequest{Limit: limit}
	for range 100 {
		p := suitecheck.Need(s.List(context.Background(), page))(t)
		if len(p.Schedules) > limit {
			t.Fatalf("list: a page of %d with limit %d", len(p.Schedules), limit)
		}
		got = append(got, p.Schedules...)
		if page.Cursor = p.Cursor; p.Cursor == "" {
			slices.SortFunc(got, func(a, b contract.Schedule) int { return strings.Compare(a.Name, b.Name) })
			return got
		}
	}
	t.Fatal("list: no last page after 100 pages")
	return nil
}

func wantEmptyList(t *testing.T, s ContractTimer) {
	t.Helper()
	p, err := s.List(context.Background(), timer.PageRequest{Limit: 10})
	if err != nil || len(p.Schedules) != 0 || p.Cursor != "" {
		t.Fatalf("list = %+v, %v; want no schedules and no cursor", p, err)
	}
}

// TimerContract is the behaviour every timer.Timer must share with
// EventBridge Scheduler: the memory scheduler that drives the simulation
// and `make dev`, and the AWS adapter against moto, both run it.
func TimerContract(t *testing.T, b TimerBackend) {
	ctx := context.Background()
	// names lists the schedules' names: ListSchedules returns summaries,
	// without the target input: a caller that needs At or Payload calls Get.
	// https://docs.aws.amazon.com/scheduler/latest/APIReference/API_ListSchedules.html
	names := func(t *testing.T, s ContractTimer, limit int) []string {
		t.Helper()
		var out []string
		for _, sc := range listAll(t, s, limit) {
			if !reflect.DeepEqual(sc, contract.Schedule{Name: sc.Name}) {
				t.Fatalf("list: %+v has more than its name", sc)
			}
			out = append(out, sc.Name)
		}
		return out
	}

	t.Run("arm then get returns the schedule", func(t *testing.T) {
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		arm(t, s, sc)
		wantGet(t, s, sc.At, sc)
	})

	t.Run("arm retried with the same client token succeeds and keeps one schedule", func(t *testing.T) {
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
		arm(t, s, sc, sc)
		wantGet(t, s, sc.At, sc)
		suitecheck.Equal(t, "list", names(t, s, 10), []string{sc.Name})
	})

	t.Run("arm without a client token twice is ErrExists", func(t *testing.T) {
		// "If you do not specify a client token, EventBridge Scheduler
		// uses a randomly generated token for the request": two creates
		// without one are two requests, not a retry.
		// https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		sc.ClientToken = ""
		arm(t, s, sc)
		suitecheck.WantErr(t, "second arm", s.Arm(ctx, sc), timer.ErrExists)
	})

	t.Run("arm of a taken name with another token is ErrExists and keeps the first", func(t *testing.T) {
		s := b.New(t)
		first := ContractSchedule("alice", 1)
		arm(t, s, first)
		other := dueAt(first, first.At.Add(time.Hour))
		other.ClientToken = first.ClientToken + "-other"
		suitecheck.WantErr(t, "second arm", s.Arm(ctx, other), timer.ErrExists)
		wantGet(t, s, first.At, first)
	})

	t.Run("move moves the schedule", func(t *testing.T) {
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		arm(t, s, sc)
		moved := dueAt(sc, sc.At.Add(36*time.Hour))
		suitecheck.Must(t, s.Move(ctx, moved, sc.At))
		wantGet(t, s, moved.At, moved)
	})

	for _, tc := range []struct {
		name string
		op   func(s ContractTimer, name string) error
	}{
		{"move", func(s ContractTimer, name string) error {
			sc := ContractSchedule("alice", 1)
			sc.Name = name
			return s.Move(ctx, sc, sc.At.Add(-time.Hour))
		}},
		{"disarm", func(s ContractTimer, name string) error {
			return s.Disarm(ctx, name, ContractSchedule("alice", 1).At)
		}},
		{"get", func(s ContractTimer, name string) error { return suitecheck.ErrOf(s.Get(ctx, name, time.Time{})) }},
	} {
		t.Run(tc.name+" of a missing schedule is ErrNotFound", func(t *testing.T) {
			s := b.New(t)
			arm(t, s, ContractSchedule("alice", 2))
			suitecheck.WantErr(t, tc.name, tc.op(s, ContractSchedule("alice", 1).Name), timer.ErrNotFound)
		})
	}

	t.Run("disarm removes only that schedule, and a second disarm is ErrNotFound", func(t *testing.T) {
		s := b.New(t)
		gone, kept := ContractSchedule("alice", 1), ContractSchedule("alice", 2)
		arm(t, s, gone, kept)
		suitecheck.Must(t, s.Disarm(ctx, gone.Name, gone.At))
		wantNotFound(t, s, gone.Name, gone.At)
		suitecheck.WantErr(t, "second disarm", s.Disarm(ctx, gone.Name, gone.At), timer.ErrNotFound)
		wantGet(t, s, kept.At, kept)
	})

	t.Run("a disarmed name can be armed again", func(t *testing.T) {
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		arm(t, s, sc)
		suitecheck.Must(t, s.Disarm(ctx, sc.Name, sc.At))
		again := dueAt(sc, sc.At.Add(time.Hour))
		again.ClientToken = sc.ClientToken + "-again"
		arm(t, s, again)
		wantGet(t, s, again.At, again)
	})

	for _, limit := range []int{1, 2, 3, 100} {
		t.Run("list pages through the schema's schedules only, limit "+strconv.Itoa(limit), func(t *testing.T) {
			s := b.New(t)
			var want []string
			for n := 1; n <= 5; n++ {
				sc := ContractSchedule("user"+strconv.Itoa(n%2), n)
				arm(t, s, sc)
				want = append(want, sc.Name)
			}
			foreign := ContractSchedule("alice", 9)
			foreign.Name = "not-ours-" + ContractID(9)
			arm(t, s, foreign)
			slices.Sort(want)
			suitecheck.Equal(t, "list", names(t, s, limit), want)
		})
	}

	t.Run("list of an empty group is one empty last page", func(t *testing.T) { wantEmptyList(t, b.New(t)) })
}

// ReaderBackend is one timer under ReaderContract.
type ReaderBackend struct {
	// New returns the timer, holding nothing, on Schema (ContractSchedule), its clock before the contract's due times.
	New func(t *testing.T) ContractTimer
	// NamedByDueTime marks a timer that names a schedule by its due time
	// (Step Functions): Get without one is timer.ErrNotFound.
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
	// wantListed checks the listing holds want, one entry each (At and
	// Payload as armed, or left out).
	wantListed := func(t *testing.T, s ContractTimer, limit int, want ...contract.Schedule) {
		t.Helper()
		got := listAll(t, s, limit)
		want = slices.Clone(want)
		slices.SortFunc(want, func(a, b contract.Schedule) int { return strings.Compare(a.Name, b.Name) })
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

	t.Run("get reads back what was armed", func(t *testing.T) {
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

	t.Run("get of nothing armed is ErrNotFound", func(t *testing.T) {
		s := b.New(t)
		sc, other := ContractSchedule("alice", 1), ContractSchedule("alice", 2)
		arm(t, s, other)
		wantNotFound(t, s, sc.Name, sc.At)
	})

	t.Run("get after disarm is ErrNotFound, and the listing leaves it out", func(t *testing.T) {
		s := b.New(t)
		gone, kept := ContractSchedule("alice", 1), ContractSchedule("alice", 2)
		arm(t, s, gone, kept)
		suitecheck.Must(t, s.Disarm(ctx, gone.Name, gone.At))
		wantNotFound(t, s, gone.Name, gone.At)
		wantListed(t, s, 10, kept)
	})

	t.Run("armed again after a disarm, as often as a reconciler re-arms: read and listed once", func(t *testing.T) {
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		for range 2 { // the second round re-arms what a disarm of a re-arm stopped
			arm(t, s, sc)
			suitecheck.Must(t, s.Disarm(ctx, sc.Name, sc.At))
			wantNotFound(t, s, sc.Name, sc.At)
			arm(t, s, sc, sc, sc)
			wantGet(t, s, sc.At, sc)
			wantListed(t, s, 10, sc)
			suitecheck.Must(t, s.Disarm(ctx, sc.Name, sc.At))
			wantListed(t, s, 10)
		}
	})

	t.Run("a move is read and listed at its new due time", func(t *testing.T) {
		s := b.New(t)
		sc := ContractSchedule("alice", 1)
		arm(t, s, sc)
		moved := dueAt(sc, sc.At.Add(36*time.Hour))
		suitecheck.Must(t, s.Move(ctx, moved, sc.At))
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

	t.Run("list of nothing armed is one empty last page", func(t *testing.T) { wantEmptyList(t, b.New(t)) })
}
