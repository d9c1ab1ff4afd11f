// Package todotest is the to-do app's conformance suites, beside its
// ports: the task store (StoreContract), the notification settings store
// (SettingsContract) and the notifier (NotifierContract), with their
// fixtures (ContractTask) and the task table as the CDK construct declares
// it (CreateTaskTable). It imports only the to-do app and the core; the
// caller passes the store or client under test.
package todotest

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/suitecheck"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// ContractStore is what StoreContract tests: a task store that can also
// list every task that awaits expiry.
type ContractStore = interface {
	task.Store
	task.PendingLister
	// CountPending is reconcile.PendingCounter.
	CountPending(ctx context.Context, req task.PendingRequest) (int, error)
}

// contractT0 is the contract's reference instant (UTC, whole seconds, as
// the service hands times to a store).
var contractT0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// ContractID is a task id that sorts by n.
func ContractID(n int) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(contractT0.UnixMilli())<<16)
	binary.BigEndian.PutUint64(b[8:], uint64(n))
	return task.EncodeULID(b)
}

// ContractTask is a Pending task of user with id ContractID(n).
func ContractTask(user string, n int) task.Task {
	created := contractT0.Add(-time.Hour)
	return task.Task{
		UserID: user, TaskID: ContractID(n), Title: "task " + ContractID(n), Status: task.StatusPending,
		DueAt: contractT0.Add(time.Duration(n) * time.Hour), CreatedAt: created, UpdatedAt: created,
		ScheduleToken: "token-" + ContractID(n),
	}
}

// StoreContract is the behaviour every task store must share with
// DynamoDB: the DynamoDB adapter and the in-memory store used by the
// simulation both run it. newStore must return an empty store.
func StoreContract(t *testing.T, newStore func(t *testing.T) ContractStore) {
	ctx := context.Background()
	now := contractT0.Add(30 * time.Minute)

	mustCreate := func(t *testing.T, s ContractStore, tasks ...task.Task) {
		t.Helper()
		for _, x := range tasks {
			if err := s.Create(ctx, x); err != nil {
				t.Fatalf("create %s/%s: %v", x.UserID, x.TaskID, err)
			}
		}
	}
	mustGet := func(t *testing.T, s ContractStore, user, id string) task.Task {
		t.Helper()
		got, err := s.Get(ctx, user, id)
		if err != nil {
			t.Fatalf("get %s/%s: %v", user, id, err)
		}
		return got
	}
	ids := func(ts []task.Task) []string {
		out := []string{}
		for _, x := range ts {
			out = append(out, x.TaskID)
		}
		return out
	}
	ptr := func(s string) *string { return &s }
	// wantNone checks that a call of what on the missing task user/id
	// made none.
	wantNone := func(t *testing.T, s ContractStore, user, id, what string) {
		t.Helper()
		suitecheck.WantErr(t, what+" of a missing task made one", suitecheck.ErrOf(s.Get(ctx, user, id)), task.ErrNotFound)
	}
	// pending pages through ListPending from req, each task once, and
	// hands each page to check (nil: none) with its cursor and the count
	// read before it.
	pending := func(t *testing.T, s ContractStore, req task.PendingRequest, check func(cursor string, read int, p task.Page)) map[string]task.Task {
		t.Helper()
		got := map[string]task.Task{}
		for pages := 0; pages <= 100; pages++ {
			p := suitecheck.Need(s.ListPending(ctx, req))(t)
			if len(p.Tasks) > req.Limit {
				t.Fatalf("page of %d tasks, limit %d", len(p.Tasks), req.Limit)
			}
			if check != nil {
				check(req.Cursor, len(got), p)
			}
			for _, x := range p.Tasks {
				if _, dup := got[x.TaskID]; dup {
					t.Fatalf("task %s listed twice", x.TaskID)
				}
				got[x.TaskID] = x
			}
			if req.Cursor = p.Cursor; p.Cursor == "" {
				return got
			}
		}
		t.Fatal("ListPending never returned an empty cursor")
		return nil
	}
	shardOf := func(x task.Task) string { return tableschema.PendingShard(x.TaskID) }

	t.Run("create then get returns the task", func(t *testing.T) {
		s := newStore(t)
		in := ContractTask("alice", 1)
		in.Description, in.ScheduleRepair = "with a description", true
		in.Reminder, in.RemindAt = task.Reminder1h, in.DueAt.Add(-time.Hour)
		in.RemindedFor, in.RemindClaimAt = in.RemindAt.Add(-time.Hour), now
		mustCreate(t, s, in)
		suitecheck.Equal(t, "get", mustGet(t, s, "alice", in.TaskID), in)
	})

	t.Run("create twice fails and keeps the first", func(t *testing.T) {
		s := newStore(t)
		first := ContractTask("alice", 1)
		mustCreate(t, s, first)
		second := first
		second.Title = "overwritten"
		suitecheck.WantErr(t, "Create", s.Create(ctx, second), task.ErrAlreadyExists)
		suitecheck.Equal(t, "get", mustGet(t, s, "alice", first.TaskID), first)
	})

	t.Run("same task id under two users are two tasks", func(t *testing.T) {
		s := newStore(t)
		a, b := ContractTask("alice", 1), ContractTask("bob", 1)
		b.Title = "bob's"
		mustCreate(t, s, a, b)
		suitecheck.Equal(t, "alice's", mustGet(t, s, "alice", a.TaskID), a)
		suitecheck.Equal(t, "bob's", mustGet(t, s, "bob", b.TaskID), b)
	})

	t.Run("get missing or another user's task is not found", func(t *testing.T) {
		s := newStore(t)
		mustCreate(t, s, ContractTask("alice", 1))
		for _, tc := range []struct{ name, user, id string }{
			{"missing", "alice", ContractID(2)},
			{"another user's", "bob", ContractID(1)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				suitecheck.WantErr(t, "Get", suitecheck.ErrOf(s.Get(ctx, tc.user, tc.id)), task.ErrNotFound)
			})
		}
	})

	t.Run("list pages oldest first within one user", func(t *testing.T) {
		s := newStore(t)
		// Created out of order, interleaved with bob's ids.
		for _, n := range []int{12, 2, 8, 0, 6, 10, 4} {
			mustCreate(t, s, ContractTask("alice", n))
		}
		for _, n := range []int{1, 3, 5, 13} {
			mustCreate(t, s, ContractTask("bob", n))
		}
		var pages [][]string
		var first task.Page
		cursor := ""
		for i := 0; i < 10; i++ {
			p := suitecheck.Need(s.List(ctx, "alice", task.PageRequest{Cursor: cursor, Limit: 3}))(t)
			if i == 0 {
				first = p
			}
			for _, x := range p.Tasks {
				if x.UserID != "alice" {
					t.Fatalf("alice's list holds %s's task %s", x.UserID, x.TaskID)
				}
			}
			pages = append(pages, ids(p.Tasks))
			if cursor = p.Cursor; cursor == "" {
				break
			}
		}
		suitecheck.Equal(t, "pages", pages, [][]string{
			{ContractID(0), ContractID(2), ContractID(4)},
			{ContractID(6), ContractID(8), ContractID(10)},
			{ContractID(12)},
		})
		suitecheck.Equal(t, "first task", first.Tasks[0], ContractTask("alice", 0))

		// Bob with alice's cursor still sees only his own tasks after it.
		p := suitecheck.Need(s.List(ctx, "bob", task.PageRequest{Cursor: first.Cursor, Limit: 10}))(t)
		suitecheck.Equal(t, "bob with alice's cursor", ids(p.Tasks), []string{ContractID(5), ContractID(13)})
		suitecheck.Equal(t, "bob's cursor", p.Cursor, "")
	})

	t.Run("list ending on a full page has no cursor", func(t *testing.T) {
		s := newStore(t)
		for n := 0; n < 6; n++ {
			mustCreate(t, s, ContractTask("alice", n))
		}
		p1 := suitecheck.Need(s.List(ctx, "alice", task.PageRequest{Limit: 3}))(t)
		p2 := suitecheck.Need(s.List(ctx, "alice", task.PageRequest{Cursor: p1.Cursor, Limit: 3}))(t)
		suitecheck.Equal(t, "second page", ids(p2.Tasks), []string{ContractID(3), ContractID(4), ContractID(5)})
		suitecheck.Equal(t, "second cursor", p2.Cursor, "")
	})

	t.Run("list with default limit and of an empty user", func(t *testing.T) {
		s := newStore(t)
		mustCreate(t, s, ContractTask("alice", 1), ContractTask("alice", 2))
		p := suitecheck.Need(s.List(ctx, "alice", task.PageRequest{}))(t)
		suitecheck.Equal(t, "alice", ids(p.Tasks), []string{ContractID(1), ContractID(2)})
		suitecheck.Equal(t, "alice's cursor", p.Cursor, "")
		p = suitecheck.Need(s.List(ctx, "carol", task.PageRequest{Limit: 5}))(t)
		suitecheck.Equal(t, "carol", len(p.Tasks), 0)
		suitecheck.Equal(t, "carol's cursor", p.Cursor, "")
	})

	t.Run("list rejects a cursor it did not hand out", func(t *testing.T) {
		s := newStore(t)
		mustCreate(t, s, ContractTask("alice", 1))
		for _, tc := range []struct{ name, cursor string }{
			{"not base64", "!!!"},
			{"not a task id", base64.RawURLEncoding.EncodeToString([]byte("not-a-task-id"))},
			{"padded base64", base64.URLEncoding.EncodeToString([]byte(ContractID(1)))},
		} {
			t.Run(tc.name, func(t *testing.T) {
				suitecheck.WantErr(t, "List", suitecheck.ErrOf(s.List(ctx, "alice", task.PageRequest{Cursor: tc.cursor})), task.ErrBadCursor)
			})
		}
	})

	t.Run("update pending is ApplyPatch", func(t *testing.T) {
		s := newStore(t)
		newDue := contractT0.Add(48*time.Hour + 1500*time.Millisecond) // sub-second: truncated
		for i, tc := range []struct {
			name string
			p    task.Patch
		}{
			{"nothing", task.Patch{}},
			{"title", task.Patch{Title: ptr("renamed")}},
			{"description", task.Patch{Description: ptr("new words")}},
			{"clear description", task.Patch{Description: ptr("")}},
			{"deadline", task.Patch{DueAt: &newDue}},
			{"complete", task.Patch{Complete: true}},
			{"complete with edits", task.Patch{Title: ptr("last"), Description: ptr("d"), DueAt: &newDue, Complete: true}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				old := ContractTask("alice", 100+i)
				old.Description = "old words"
				old.ScheduledFor = old.DueAt // a deadline change clears it
				mustCreate(t, s, old)
				got := suitecheck.Need(s.UpdatePending(ctx, "alice", old.TaskID, tc.p, now))(t)
				want := task.ApplyPatch(old, tc.p, now)
				suitecheck.Equal(t, "returned", got, want)
				suitecheck.Equal(t, "stored", mustGet(t, s, "alice", old.TaskID), want)
			})
		}
	})

	t.Run("update with a reminder basis: only while the task still has it", func(t *testing.T) {
		s := newStore(t)
		fifteen, none := task.Reminder15m, task.ReminderNone
		later := contractT0.Add(72 * time.Hour)
		soon := now.Add(30 * time.Minute) // its 1h reminder is 30 minutes ago
		for i, tc := range []struct {
			name string
			p    task.Patch
			ok   bool
		}{
			{"reminder", task.Patch{Reminder: &fifteen}, true},
			{"reminder none", task.Patch{Reminder: &none}, true},
			{"deadline", task.Patch{DueAt: &later}, true},
			{"deadline and reminder", task.Patch{DueAt: &later, Reminder: &fifteen}, true},
			{"reminder passed when written: done at once", task.Patch{DueAt: &soon}, true},
			{"basis deadline changed meanwhile", task.Patch{Reminder: &fifteen}, false},
			{"basis reminder changed meanwhile", task.Patch{DueAt: &later}, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				old := ContractTask("alice", 200+i)
				old.Reminder, old.RemindAt, old.RemindClaimAt = task.Reminder1h, old.DueAt.Add(-time.Hour), now
				old.ScheduledFor = old.DueAt
				mustCreate(t, s, old)
				basis := task.ReminderBasis{DueAt: old.DueAt, Reminder: old.Reminder, RemindAt: task.ApplyPatch(old, tc.p, now).RemindAt}
				switch tc.name {
				case "basis deadline changed meanwhile":
					basis.DueAt = basis.DueAt.Add(time.Hour)
				case "basis reminder changed meanwhile":
					basis.Reminder = task.Reminder1d
				}
				tc.p.Basis = &basis
				got, err := s.UpdatePending(ctx, "alice", old.TaskID, tc.p, now)
				if !tc.ok {
					suitecheck.WantErr(t, "UpdatePending", err, task.ErrConditionFailed)
					suitecheck.Equal(t, "stored", mustGet(t, s, "alice", old.TaskID), old)
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				want := task.ApplyPatch(old, tc.p, now)
				suitecheck.Equal(t, "returned", got, want)
				suitecheck.Equal(t, "stored", mustGet(t, s, "alice", old.TaskID), want)
			})
		}
		// An item from before reminders ("" reminder) is a basis too.
		legacy := ContractTask("alice", 299)
		mustCreate(t, s, legacy)
		p := task.Patch{DueAt: &later, Basis: &task.ReminderBasis{DueAt: legacy.DueAt}}
		if _, err := s.UpdatePending(ctx, "alice", legacy.TaskID, p, now); err != nil {
			t.Fatalf("legacy item: %v", err)
		}
	})

	t.Run("claim reminder: pending with both times, once per lease, never after the record", func(t *testing.T) {
		const lease = time.Minute
		s := newStore(t)
		in, done := ContractTask("alice", 1), ContractTask("alice", 2)
		for _, x := range []*task.Task{&in, &done} {
			x.Reminder, x.RemindAt = task.Reminder1h, x.DueAt.Add(-time.Hour)
		}
		mustCreate(t, s, in, done)
		suitecheck.Need(s.UpdatePending(ctx, "alice", done.TaskID, task.Patch{Complete: true}, now))(t)
		for _, c := range []struct {
			name     string
			user, id string
			due, at  time.Time
		}{
			{"done", "alice", done.TaskID, done.DueAt, done.RemindAt},
			{"missing", "alice", ContractID(9), in.DueAt, in.RemindAt},
			{"another user's", "bob", in.TaskID, in.DueAt, in.RemindAt},
			{"another deadline", "alice", in.TaskID, in.DueAt.Add(time.Second), in.RemindAt},
			{"another reminder time", "alice", in.TaskID, in.DueAt, in.RemindAt.Add(time.Second)},
		} {
			suitecheck.WantErr(t, c.name, suitecheck.ErrOf(s.ClaimReminder(ctx, c.user, c.id, c.due, c.at, now, lease)), task.ErrConditionFailed)
		}
		got := suitecheck.Need(s.ClaimReminder(ctx, "alice", in.TaskID, in.DueAt, in.RemindAt, now, lease))(t)
		want := in
		want.RemindClaimAt = now
		suitecheck.Equal(t, "claimed", got, want)
		suitecheck.Equal(t, "stored", mustGet(t, s, "alice", in.TaskID), want)
		suitecheck.WantErr(t, "ClaimReminder", suitecheck.ErrOf(s.ClaimReminder(ctx, "alice", in.TaskID, in.DueAt, in.RemindAt, now.Add(lease-time.Second), lease)), task.ErrConditionFailed)
		if _, err := s.ClaimReminder(ctx, "alice", in.TaskID, in.DueAt, in.RemindAt, now.Add(lease), lease); err != nil {
			t.Fatalf("after the lease: %v", err)
		}
		suitecheck.Must(t, s.MarkReminded(ctx, "alice", in.TaskID, in.RemindAt))
		suitecheck.WantErr(t, "MarkReminded", s.MarkReminded(ctx, "alice", in.TaskID, in.RemindAt), task.ErrConditionFailed)
		suitecheck.WantErr(t, "ClaimReminder", suitecheck.ErrOf(s.ClaimReminder(ctx, "alice", in.TaskID, in.DueAt, in.RemindAt, now.Add(time.Hour), lease)), task.ErrConditionFailed)
		if st := mustGet(t, s, "alice", in.TaskID); st.Status != task.StatusPending || !st.RemindedFor.Equal(in.RemindAt) {
			t.Fatalf("after the record: %+v", st)
		}
		suitecheck.WantErr(t, "MarkReminded", s.MarkReminded(ctx, "alice", ContractID(9), in.RemindAt), task.ErrConditionFailed)
		wantNone(t, s, "alice", ContractID(9), "MarkReminded")
	})

	t.Run("update needs a pending task of the caller", func(t *testing.T) {
		s := newStore(t)
		done, expired, other := ContractTask("alice", 1), ContractTask("alice", 2), ContractTask("alice", 3)
		mustCreate(t, s, done, expired, other)
		suitecheck.Need(s.UpdatePending(ctx, "alice", done.TaskID, task.Patch{Complete: true}, now))(t)
		suitecheck.Need(s.Expire(ctx, "alice", expired.TaskID, expired.DueAt, now))(t)
		for _, tc := range []struct {
			name, user, id string
			want           error
			// wantState: the state a *task.NotPendingError names.
			wantState task.Status
		}{
			{"done", "alice", done.TaskID, task.ErrNotPending, task.StatusDone},
			{"expired", "alice", expired.TaskID, task.ErrNotPending, task.StatusExpired},
			{"missing", "alice", ContractID(9), task.ErrNotFound, ""},
			{"another user's", "bob", other.TaskID, task.ErrNotFound, ""},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before, _ := s.Get(ctx, "alice", tc.id)
				err := suitecheck.ErrOf(s.UpdatePending(ctx, tc.user, tc.id, task.Patch{Title: ptr("x")}, now.Add(time.Minute)))
				suitecheck.WantErr(t, "UpdatePending", err, tc.want)
				if tc.wantState != "" {
					var np *task.NotPendingError
					if !errors.As(err, &np) || np.Status != tc.wantState {
						t.Fatalf("error = %v, want a *task.NotPendingError naming %s", err, tc.wantState)
					}
				}
				after, _ := s.Get(ctx, "alice", tc.id)
				suitecheck.Equal(t, "alice's item", after, before)
			})
		}
		wantNone(t, s, "bob", other.TaskID, "UpdatePending")
	})

	t.Run("count user pending counts the user's pending tasks whatever ended the others", func(t *testing.T) {
		s := newStore(t)
		count := func(t *testing.T, user string, limit, want int) {
			t.Helper()
			n := suitecheck.Need(s.CountUserPending(ctx, user, limit))(t)
			suitecheck.Equal(t, "count of "+user+" up to "+strconv.Itoa(limit), n, want)
		}
		for n := 1; n <= 8; n++ {
			mustCreate(t, s, ContractTask("alice", n))
		}
		mustCreate(t, s, ContractTask("bob", 1), ContractTask("bob", 2))
		count(t, "alice", 0, 8)
		count(t, "alice", 1000, 8)
		count(t, "alice", 3, 3)
		count(t, "bob", 0, 2)
		count(t, "carol", 0, 0)

		// Each path out of Pending frees a place: completing, editing no,
		// expiring (the expiry function and the reconciler), deleting.
		suitecheck.Need(s.UpdatePending(ctx, "alice", ContractID(1), task.Patch{Title: ptr("renamed")}, now))(t)
		count(t, "alice", 0, 8)
		suitecheck.Need(s.UpdatePending(ctx, "alice", ContractID(2), task.Patch{Complete: true}, now))(t)
		count(t, "alice", 0, 7)
		suitecheck.Need(s.Expire(ctx, "alice", ContractID(3), ContractTask("alice", 3).DueAt, now))(t)
		count(t, "alice", 0, 6)
		suitecheck.Must(t, s.MarkNotified(ctx, "alice", ContractID(3), now))
		count(t, "alice", 0, 6)
		suitecheck.Need(s.Delete(ctx, "alice", ContractID(4)))(t)
		count(t, "alice", 0, 5)
		// Deleting a task that no longer counted changes nothing.
		suitecheck.Need(s.Delete(ctx, "alice", ContractID(2)))(t)
		count(t, "alice", 0, 5)
		suitecheck.Must(t, s.SetScheduleRepair(ctx, "alice", ContractID(5), true))
		count(t, "alice", 0, 5)
		count(t, "bob", 0, 2)
		// A task stored already ended (a restore) never counts.
		done := ContractTask("carol", 1)
		done.Status, done.CompletedAt = task.StatusDone, now
		mustCreate(t, s, done)
		count(t, "carol", 0, 0)
	})

	t.Run("delete returns the old task once", func(t *testing.T) {
		s := newStore(t)
		in := ContractTask("alice", 1)
		mustCreate(t, s, in)
		suitecheck.WantErr(t, "Delete", suitecheck.ErrOf(s.Delete(ctx, "bob", in.TaskID)), task.ErrNotFound)
		got := suitecheck.Need(s.Delete(ctx, "alice", in.TaskID))(t)
		suitecheck.Equal(t, "deleted", got, in)
		suitecheck.WantErr(t, "Get", suitecheck.ErrOf(s.Get(ctx, "alice", in.TaskID)), task.ErrNotFound)
		suitecheck.WantErr(t, "Delete", suitecheck.ErrOf(s.Delete(ctx, "alice", in.TaskID)), task.ErrNotFound)
	})

	t.Run("expire needs pending and the same deadline", func(t *testing.T) {
		s := newStore(t)
		in := ContractTask("alice", 1)
		mustCreate(t, s, in)
		suitecheck.WantErr(t, "Expire", suitecheck.ErrOf(s.Expire(ctx, "alice", in.TaskID, in.DueAt.Add(time.Second), now)), task.ErrConditionFailed)
		suitecheck.Equal(t, "after a wrong deadline", mustGet(t, s, "alice", in.TaskID), in)

		got := suitecheck.Need(s.Expire(ctx, "alice", in.TaskID, in.DueAt, now))(t)
		want := in
		want.Status, want.ExpiredAt, want.UpdatedAt, want.NotifyClaimAt = task.StatusExpired, now, now, now
		suitecheck.Equal(t, "returned", got, want)
		suitecheck.Equal(t, "stored", mustGet(t, s, "alice", in.TaskID), want)

		suitecheck.WantErr(t, "Expire", suitecheck.ErrOf(s.Expire(ctx, "alice", in.TaskID, in.DueAt, now.Add(time.Minute))), task.ErrConditionFailed)
		suitecheck.Equal(t, "after a second expire", mustGet(t, s, "alice", in.TaskID), want)
	})

	t.Run("expire fails on a done, missing or another user's task", func(t *testing.T) {
		s := newStore(t)
		done, other := ContractTask("alice", 1), ContractTask("alice", 2)
		mustCreate(t, s, done, other)
		suitecheck.Need(s.UpdatePending(ctx, "alice", done.TaskID, task.Patch{Complete: true}, now))(t)
		for _, tc := range []struct {
			name, user string
			t          task.Task
		}{
			{"done", "alice", done},
			{"missing", "alice", ContractTask("alice", 3)},
			{"another user's", "bob", other},
		} {
			t.Run(tc.name, func(t *testing.T) {
				suitecheck.WantErr(t, "Expire", suitecheck.ErrOf(s.Expire(ctx, tc.user, tc.t.TaskID, tc.t.DueAt, now)), task.ErrConditionFailed)
			})
		}
		wantNone(t, s, "alice", ContractID(3), "Expire")
	})

	t.Run("mark notified once, only an expired task", func(t *testing.T) {
		s := newStore(t)
		in, pending := ContractTask("alice", 1), ContractTask("alice", 3)
		mustCreate(t, s, in, pending)
		expired := suitecheck.Need(s.Expire(ctx, "alice", in.TaskID, in.DueAt, now))(t)
		suitecheck.Must(t, s.MarkNotified(ctx, "alice", in.TaskID, now.Add(time.Second)))
		want := expired
		want.NotifiedAt = now.Add(time.Second)
		suitecheck.Equal(t, "stored", mustGet(t, s, "alice", in.TaskID), want)
		suitecheck.WantErr(t, "MarkNotified", s.MarkNotified(ctx, "alice", in.TaskID, now.Add(time.Minute)), task.ErrConditionFailed)
		suitecheck.Equal(t, "after a second mark", mustGet(t, s, "alice", in.TaskID), want)
		suitecheck.WantErr(t, "MarkNotified", s.MarkNotified(ctx, "alice", pending.TaskID, now), task.ErrConditionFailed)
		suitecheck.Equal(t, "a pending task after a mark", mustGet(t, s, "alice", pending.TaskID), pending)
		suitecheck.WantErr(t, "MarkNotified", s.MarkNotified(ctx, "alice", ContractID(2), now), task.ErrConditionFailed)
		wantNone(t, s, "alice", ContractID(2), "MarkNotified")
	})

	t.Run("claim notification: once per lease, never after the record", func(t *testing.T) {
		const lease = time.Minute
		s := newStore(t)
		in, pending, done := ContractTask("alice", 1), ContractTask("alice", 2), ContractTask("alice", 3)
		mustCreate(t, s, in, pending, done)
		suitecheck.Need(s.UpdatePending(ctx, "alice", done.TaskID, task.Patch{Complete: true}, now))(t)
		// A firing claims at or after the deadline: only such a claim
		// mark lets a retry take over (contract.Schema.ClaimedFor).
		now := in.DueAt.Add(30 * time.Second)
		expired := suitecheck.Need(s.Expire(ctx, "alice", in.TaskID, in.DueAt, now))(t) // takes the claim at now
		claimed := func(at time.Time) task.Task {
			x := expired
			x.NotifyClaimAt = at
			return x
		}
		for _, step := range []struct {
			name string
			at   time.Time
			want error
		}{
			{"at once, held by the expiry", now, task.ErrConditionFailed},
			{"within the lease", now.Add(lease - time.Second), task.ErrConditionFailed},
			{"after the lease", now.Add(lease), nil},
			{"again within the new lease", now.Add(lease + 30*time.Second), task.ErrConditionFailed},
			{"after the new lease", now.Add(3 * lease), nil},
		} {
			before := mustGet(t, s, "alice", in.TaskID)
			err := s.ClaimNotification(ctx, "alice", in.TaskID, in.DueAt, step.at, lease)
			if step.want != nil {
				suitecheck.WantErr(t, step.name, err, step.want)
				suitecheck.Equal(t, step.name+": unchanged", mustGet(t, s, "alice", in.TaskID), before)
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
			suitecheck.Equal(t, step.name+": claimed", mustGet(t, s, "alice", in.TaskID), claimed(step.at))
		}

		// A firing for another deadline never takes it over, lease or not.
		suitecheck.WantErr(t, "ClaimNotification", s.ClaimNotification(ctx, "alice", in.TaskID, in.DueAt.Add(time.Hour), now.Add(10*lease), lease),
			task.ErrConditionFailed)
		suitecheck.Must(t, s.MarkNotified(ctx, "alice", in.TaskID, now.Add(4*lease)))
		suitecheck.WantErr(t, "ClaimNotification", s.ClaimNotification(ctx, "alice", in.TaskID, in.DueAt, now.Add(time.Hour), lease), task.ErrConditionFailed)
		if got := mustGet(t, s, "alice", in.TaskID); !got.NotifyClaimAt.Equal(now.Add(3 * lease)) {
			t.Fatalf("a claim after the record moved it to %v", got.NotifyClaimAt)
		}
		for _, tc := range []struct{ name, user, id string }{
			{"pending", "alice", pending.TaskID},
			{"done", "alice", done.TaskID},
			{"missing", "alice", ContractID(4)},
			{"another user's", "bob", in.TaskID},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before, _ := s.Get(ctx, tc.user, tc.id)
				if tc.id == pending.TaskID || tc.id == done.TaskID {
					// Their own deadline, not in's.
					suitecheck.WantErr(t, "ClaimNotification", s.ClaimNotification(ctx, tc.user, tc.id, before.DueAt, now.Add(time.Hour), lease), task.ErrConditionFailed)
				}
				suitecheck.WantErr(t, "ClaimNotification", s.ClaimNotification(ctx, tc.user, tc.id, in.DueAt, now.Add(time.Hour), lease), task.ErrConditionFailed)
				after, _ := s.Get(ctx, tc.user, tc.id)
				suitecheck.Equal(t, "item", after, before)
			})
		}
		wantNone(t, s, "bob", in.TaskID, "ClaimNotification")
	})

	t.Run("set and clear schedule repair", func(t *testing.T) {
		s := newStore(t)
		in := ContractTask("alice", 1)
		mustCreate(t, s, in)
		for _, repair := range []bool{true, true, false, false} {
			suitecheck.Must(t, s.SetScheduleRepair(ctx, "alice", in.TaskID, repair))
			want := in
			want.ScheduleRepair = repair
			suitecheck.Equal(t, "stored", mustGet(t, s, "alice", in.TaskID), want)
		}
		suitecheck.WantErr(t, "SetScheduleRepair", s.SetScheduleRepair(ctx, "bob", in.TaskID, true), task.ErrNotFound)
		wantNone(t, s, "bob", in.TaskID, "SetScheduleRepair")
	})

	t.Run("mark scheduled: only a pending task with that deadline", func(t *testing.T) {
		s := newStore(t)
		in, done := ContractTask("alice", 1), ContractTask("alice", 2)
		in.ScheduleRepair = true
		mustCreate(t, s, in, done)
		suitecheck.Need(s.UpdatePending(ctx, "alice", done.TaskID, task.Patch{Complete: true}, now))(t)
		for _, tc := range []struct {
			name, user, id string
			due            time.Time
		}{
			{"another deadline", "alice", in.TaskID, in.DueAt.Add(time.Second)},
			{"done", "alice", done.TaskID, done.DueAt},
			{"missing", "alice", ContractID(3), in.DueAt},
			{"another user's", "bob", in.TaskID, in.DueAt},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before, _ := s.Get(ctx, tc.user, tc.id)
				suitecheck.WantErr(t, "MarkScheduled", s.MarkScheduled(ctx, tc.user, tc.id, tc.due), task.ErrConditionFailed)
				after, _ := s.Get(ctx, tc.user, tc.id)
				suitecheck.Equal(t, "item", after, before)
			})
		}
		suitecheck.Must(t, s.MarkScheduled(ctx, "alice", in.TaskID, in.DueAt))
		want := in
		want.ScheduledFor, want.ScheduleRepair = in.DueAt, false
		suitecheck.Equal(t, "marked (repair mark cleared)", mustGet(t, s, "alice", in.TaskID), want)
		if !want.ScheduleConfirmed() {
			t.Fatal("a marked task is not ScheduleConfirmed")
		}
	})

	t.Run("list pending with DueBy: only the tasks due by then, every shard", func(t *testing.T) {
		s := newStore(t)
		by := ContractTask("alice", 20).DueAt
		want := map[string]bool{}
		for n := 0; n < 40; n++ {
			x := ContractTask([]string{"alice", "bob"}[n%2], n)
			mustCreate(t, s, x)
			if n <= 20 {
				want[x.TaskID] = true
			}
		}
		got := map[string]bool{}
		for id := range pending(t, s, task.PendingRequest{Limit: 3, DueBy: by}, func(cursor string, read int, p task.Page) {
			if n := suitecheck.Need(s.CountPending(ctx, task.PendingRequest{Cursor: cursor, DueBy: by}))(t); n != len(want)-read {
				t.Fatalf("CountPending from %q = %d, want %d", cursor, n, len(want)-read)
			}
			for i, x := range p.Tasks {
				if i > 0 && x.DueAt.Before(p.Tasks[i-1].DueAt) && shardOf(x) == shardOf(p.Tasks[i-1]) {
					t.Fatalf("shard %s out of deadline order", shardOf(x))
				}
			}
		}) {
			got[id] = true
		}
		suitecheck.Equal(t, "tasks due by "+task.FormatTime(by), got, want)
	})

	t.Run("list pending returns every task awaiting expiry once", func(t *testing.T) {
		s := newStore(t)
		want := map[string]task.Task{}
		for n := 0; n < 40; n++ {
			x := ContractTask([]string{"alice", "bob", "carol"}[n%3], n)
			mustCreate(t, s, x)
			switch {
			case n%10 == 1:
				suitecheck.Need(s.UpdatePending(ctx, x.UserID, x.TaskID, task.Patch{Complete: true}, now))(t)
			case n%10 == 2: // expired, notification not recorded: listed
				e := suitecheck.Need(s.Expire(ctx, x.UserID, x.TaskID, x.DueAt, now))(t)
				want[x.TaskID] = e
			case n%10 == 5: // expired and notified: not listed
				suitecheck.Need(s.Expire(ctx, x.UserID, x.TaskID, x.DueAt, now))(t)
				suitecheck.Must(t, s.MarkNotified(ctx, x.UserID, x.TaskID, now))
			case n%10 == 3:
				suitecheck.Need(s.Delete(ctx, x.UserID, x.TaskID))(t)
			case n%10 == 4:
				suitecheck.Must(t, s.SetScheduleRepair(ctx, x.UserID, x.TaskID, true))
				x.ScheduleRepair = true
				want[x.TaskID] = x
			default:
				want[x.TaskID] = x
			}
		}
		suitecheck.Equal(t, "tasks awaiting expiry", pending(t, s, task.PendingRequest{Limit: 4}, nil), want)
	})
}
