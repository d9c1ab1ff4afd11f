package sim

import (
	"errors"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// checkAtRest checks I3 after the fault-free reconciler pass that ends the
// history's busy part: no schedule for a task that is gone or not
// Pending; every Pending task due (or to be reminded, and not yet) after
// the pass ended has its schedule at that time, for that deadline.
func (w *world) checkAtRest() {
	for _, t := range w.mem.All() {
		sc, ok := w.sched.Lookup(task.ScheduleName(t.TaskID))
		switch {
		case t.Status != task.StatusPending && ok && !w.staleAfterCancel(task.ScheduleName(t.TaskID), t.DueAt):
			w.violate("I3", "task %s is %s but has a schedule at %s", t.TaskID, t.Status, task.FormatTime(sc.At))
		case t.Status != task.StatusPending:
		case t.DueAt.After(w.passEnd):
			w.checkArmed(t, task.ScheduleFor(t), "")
		}
		// A reminder already delivered fired (and deleted itself) while
		// the pipeline drained.
		if want, ok := task.ReminderFor(t, w.passEnd); t.Status == task.StatusPending && ok && !t.RemindedFor.Equal(want.At) {
			w.checkArmed(t, want, "reminder ")
		}
	}
	for _, sc := range w.sched.All() {
		id, ok := task.TaskIDFromScheduleName(sc.Name)
		if !ok {
			continue // a reminder schedule: checked above
		}
		var due time.Time // the deleted task's last due time
		if t := w.tasks[id]; t != nil {
			due = w.currentDue(t)
		}
		if _, err := w.mem.Get(w.ctx, sc.Payload.Key.Partition, id); errors.Is(err, task.ErrNotFound) && !w.staleAfterCancel(sc.Name, due) {
			w.violate("I3", "schedule %s has no task", sc.Name)
		}
	}
}

// checkArmed checks I3 for a schedule (what: "" for the deadline's,
// "reminder " for the reminder's) that Pending task t must have.
func (w *world) checkArmed(t task.Task, want contract.Schedule, what string) {
	sc, found := w.sched.Lookup(want.Name)
	if alt, tolerated := w.staleTolerated(want); tolerated {
		sc, found = alt, true
	}
	switch {
	case !found:
		w.violate("I3", "pending task %s due %s has no %sschedule for %s", t.TaskID,
			task.FormatTime(t.DueAt), what, task.FormatTime(want.At))
	case !sc.At.Equal(want.At) || !sc.Payload.Equal(want.Payload):
		w.violate("I3", "pending task %s has its %sschedule at %s for %s/%s, want %s", t.TaskID, what,
			task.FormatTime(sc.At), task.FormatTime(sc.Payload.Due), task.FormatTime(sc.Payload.Remind), task.FormatTime(want.At))
	}
}

// I6's margins (docs/simulation.md#what-i6-owes): a reminder is owed when
// set remindLead ahead and left as it was until remindSlack after it.
const (
	remindLead  = 2 * time.Minute
	remindSlack = 12 * time.Minute
)

// remState is a task's deadline and reminder as its owner set them.
type remState struct {
	due time.Time
	rem task.Reminder
	// from is the op that set them.
	from op
}

func (r remState) at() time.Time { return task.RemindAt(r.due, r.rem) }

// remStateBefore is the task's state before sequence number seq; ok is
// false when it was not created, or completed or deleted, by then.
func remStateBefore(t *taskState, seq int) (remState, bool) {
	var st remState
	live := false
	for _, o := range t.ops {
		if o.seq >= seq || !o.ok() {
			continue
		}
		switch o.kind {
		case opCreate:
			st, live = remState{due: o.due, rem: o.reminder.Or(), from: o}, true
		case opSetDue:
			if !o.due.Equal(st.due) {
				st.due, st.from = o.due, o
			}
		case opRemind:
			if o.reminder != st.rem { // setting the same reminder again changes nothing
				st.rem, st.from = o.reminder, o
			}
		case opComplete, opDelete:
			live = false
		}
	}
	return st, live
}

// handledBefore reports whether the cancel worker handled a message
// carrying reminder time at between the edit that set it (from) and that
// time: only then is an edit's reminder owed (docs/simulation.md#what-i6-owes).
func handledBefore(t *taskState, from, at time.Time) bool {
	for _, h := range t.remHandled[task.FormatTime(at)] {
		if !h.Before(from) && h.Before(at) {
			return true
		}
	}
	return false
}

// checkReminders checks I6 for one task.
func (w *world) checkReminders(t *taskState) {
	// Safety: each reminder was for the deadline and reminder time in
	// effect, at or after that time, which was ahead when written, and the
	// task was not completed, deleted or expired before it.
	for _, n := range t.reminders {
		st, live := remStateBefore(t, n.seq)
		got := task.RemindAt(n.n.DueAt, n.n.Reminder)
		switch {
		case !live:
			w.violate("I6", "task %s reminded at %s although it was completed or deleted before", t.id, task.FormatTime(n.at))
		case st.at().IsZero() || !got.Equal(st.at()) || !n.n.DueAt.Equal(st.due):
			w.violate("I6", "task %s reminded for %s (due %s), not its reminder %s (due %s, %s)", t.id,
				task.FormatTime(got), task.FormatTime(n.n.DueAt), task.FormatTime(st.at()), task.FormatTime(st.due), st.rem)
		case n.at.Before(got):
			w.violate("I6", "task %s reminded at %s, before its reminder time %s", t.id, task.FormatTime(n.at), task.FormatTime(got))
		case !got.After(st.from.at):
			w.violate("I6", "task %s reminded for %s, which had passed when it was set at %s", t.id,
				task.FormatTime(got), task.FormatTime(st.from.at))
		}
		for _, e := range t.notes {
			if e.seq < n.seq {
				w.violate("I6", "task %s reminded at %s after it expired", t.id, task.FormatTime(n.at))
			}
		}
	}
	// Liveness: an owed reminder is delivered, once unless a crash fell
	// between a publish and its record (docs/simulation.md#what-i6-owes).
	if w.blamed[t.id] > 0 || t.remDead || kindOf(w.cfg.Timer).FiresWithin > 0 {
		return
	}
	sent := func(due, at time.Time) int {
		c := 0
		for _, n := range t.reminders {
			if n.n.DueAt.Equal(due) && task.RemindAt(n.n.DueAt, n.n.Reminder).Equal(at) {
				c++
			}
		}
		return c
	}
	for i, o := range t.ops {
		if !o.ok() || (o.kind != opCreate && o.kind != opSetDue && o.kind != opRemind) {
			continue
		}
		st, live := remStateBefore(t, o.seq+1)
		at := st.at()
		if !live || at.IsZero() || at.Sub(o.at) < remindLead {
			continue
		}
		stable := true
		for _, next := range t.ops[i+1:] {
			// Every successful op but an edit of the text changes what a
			// reminder depends on, or ends the task.
			if next.ok() && next.kind != opEdit && !next.at.After(at.Add(remindSlack)) {
				stable = false
				break
			}
		}
		if !stable || (o.kind != opCreate && !handledBefore(t, o.at, at)) {
			continue
		}
		w.res.RemindersOwed++
		if sent(st.due, at) == 0 {
			w.violate("I6", "task %s kept reminder %s (due %s) past it, but was never reminded", t.id,
				task.FormatTime(at), task.FormatTime(st.due))
		}
	}
	// Every reminder sent (owed or not): once unless a crash fell between
	// a publish and its record.
	for _, n := range t.reminders {
		if c := sent(n.n.DueAt, task.RemindAt(n.n.DueAt, n.n.Reminder)); c > 1+t.remDupAllowed {
			w.violate("I6", "task %s reminded %d times for %s (crash windows: %d)", t.id, c,
				task.FormatTime(task.RemindAt(n.n.DueAt, n.n.Reminder)), t.remDupAllowed)
			return
		}
	}
}

// checkFinal checks every invariant once every deadline and the grace
// period have passed and the pipeline settled after a fault-free
// reconciler pass.
func (w *world) checkFinal() {
	for _, sc := range w.sched.All() {
		w.violate("I3", "schedule %s (at %s, due %s) is left after every deadline passed", sc.Name, task.FormatTime(sc.At), task.FormatTime(sc.Payload.Due))
	}
	for _, id := range w.taskOrder {
		w.checkTask(w.tasks[id])
		w.checkReminders(w.tasks[id])
	}
	w.checkQueue()
	for _, u := range w.users {
		w.checkSubscription(u)
	}
}

func isDue(o op) bool { return o.ok() && (o.kind == opCreate || o.kind == opSetDue) }

// checkTask checks I1 and I2 for one task against what its owner did.
func (w *world) checkTask(t *taskState) {
	last := -1
	for i, o := range t.ops {
		if isDue(o) {
			last = i
		}
	}
	if last < 0 {
		w.violate("I2", "task %s has no successful create", t.id)
		return
	}
	// I1: each notification was for the deadline in effect, not before it,
	// and the task was not completed, rescheduled or deleted before it.
	for _, n := range t.notes {
		eff := -1
		for i, o := range t.ops {
			if o.seq < n.seq && isDue(o) {
				eff = i
			}
		}
		if eff < 0 || !n.n.DueAt.Equal(t.ops[eff].due) {
			w.violate("I1", "task %s notified for deadline %s, not its deadline", t.id, task.FormatTime(n.n.DueAt))
			continue
		}
		if n.at.Before(n.n.DueAt) {
			w.violate("I1", "task %s notified at %s, before its deadline %s", t.id, task.FormatTime(n.at), task.FormatTime(n.n.DueAt))
		}
		for _, o := range t.ops[eff+1:] {
			bad := o.kind == opComplete || o.kind == opSetDue || (o.kind == opDelete && o.seq < n.seq) ||
				(o.kind == opEdit && o.seq > n.seq)
			if o.ok() && bad {
				by := ""
				if o.byWriter {
					by = " (a writer's, with the fired state)"
				}
				w.violate("I1", "task %s notified for %s although its %s%s at %s succeeded", t.id,
					task.FormatTime(n.n.DueAt), o.kind, by, task.FormatTime(o.at))
			}
		}
	}
	// I2: a task its owner left Pending at its deadline ends Expired and
	// notified, once unless a crash fell between a publish and its record
	// (concurrent invocations and failed reconciler expiries are no
	// excuse).
	for _, o := range t.ops[last+1:] {
		if o.ok() && (o.kind == opComplete || o.kind == opDelete) {
			return
		}
	}
	due := t.ops[last].due
	got, err := w.mem.Get(w.ctx, t.user, t.id)
	if err != nil {
		w.violate("I2", "task %s, left Pending by its owner, is gone: %v", t.id, err)
		return
	}
	if got.Status != task.StatusExpired || !got.DueAt.Equal(due) {
		w.violate("I2", "task %s, left Pending with deadline %s, ends %s with deadline %s", t.id,
			task.FormatTime(due), got.Status, task.FormatTime(got.DueAt))
	}
	sent := 0
	for _, n := range t.notes {
		if n.n.DueAt.Equal(due) {
			sent++
		}
	}
	switch {
	case sent == 0:
		w.violate("I2", "task %s expired at its deadline %s but was never notified", t.id, task.FormatTime(due))
	case sent > 1+t.dupAllowed:
		w.violate("I2", "task %s notified %d times (crash windows: %d, concurrent invocations: %d)", t.id, sent,
			t.dupAllowed, t.concurrent)
	}
}

// checkSubscription checks I5 after a fault-free sign-in.
func (w *world) checkSubscription(u *user) {
	if out := w.subs.OnSignIn(w.ctx, u.sub, u.email); out == notify.Failed {
		w.violate("I5", "fault-free sign-in of %s failed", u.email)
	}
	subs := w.sns.Subscriptions(u.email)
	if len(subs) != 1 {
		w.violate("I5", "%s has %d subscriptions, want 1", u.email, len(subs))
		return
	}
	s := subs[0]
	if s.TopicArn != notify.TopicFor(w.topics, u.sub) || !notify.SamePolicy(s.Attributes["FilterPolicy"], notify.FilterPolicy(u.sub)) {
		w.violate("I5", "%s is subscribed on %s with policy %q", u.email, s.TopicArn, s.Attributes["FilterPolicy"])
	}
}
