package cancel

import "github.com/unschedule/unschedule/internal/domain/task"

// Decide says whether a change-feed record warrants touching the task's
// schedule. It compares the transition (old image against new), never the
// new state alone, so an edit that leaves a task Pending, or a replay of a
// record already handled, does not look like a completion.
//
//	INSERT                                   nothing (the API created the schedule)
//	MODIFY Pending -> Done                   cancel
//	MODIFY Pending -> Expired                nothing (the schedule fired and deleted itself)
//	MODIFY Pending -> Pending, dueAt moved   reschedule to the new dueAt
//	MODIFY Pending -> Pending, same dueAt    nothing (title, description, repair flag, notifiedAt)
//	MODIFY from Done or Expired              nothing (terminal: no schedule to touch)
//	REMOVE of a Pending task                 cancel
//	REMOVE of a Done or Expired task         nothing (cancelled or fired already)
//
// Records with a missing image (a damaged or filtered record; the key is
// always known) are decided by what is safe, given that expiry's
// conditional write is the real guarantee and the reconciler repairs
// drift:
//
//	REMOVE, no old image                     cancel by key: the task is gone, whatever
//	                                         it was, and a cancel of nothing succeeds
//	MODIFY, no old image, new not Pending    cancel: a Done task must not keep a
//	                                         schedule; for Expired it finds none
//	MODIFY, no old image, new Pending        reschedule to the new image's dueAt: it
//	                                         may be a deadline change, and moving a
//	                                         schedule to where it already is changes
//	                                         nothing
//	MODIFY, no new image                     nothing: the task may still be Pending,
//	                                         and deleting its schedule could delay its
//	                                         expiry; a schedule left behind fires,
//	                                         finds the task not Pending and does
//	                                         nothing, and the reconciler removes it
//	a reschedule whose new image lacks       nothing: it cannot give a correct
//	dueAt or scheduleToken                   schedule; the reconciler repairs from
//	                                         the table
//	anything else                            nothing
func Decide(c task.Change) (Message, bool) {
	cancel := Message{Action: ActionCancel, UserID: c.UserID, TaskID: c.TaskID, EventID: c.EventID}
	switch c.Kind {
	case task.ChangeRemove:
		if c.Old == nil || c.Old.Status == task.StatusPending {
			return cancel, true
		}
		return Message{}, false
	case task.ChangeModify:
		switch {
		case c.New == nil:
			return Message{}, false
		case c.Old == nil && c.New.Status != task.StatusPending:
			return cancel, true
		case c.Old == nil:
			return reschedule(c)
		case c.Old.Status != task.StatusPending:
			return Message{}, false
		case c.New.Status == task.StatusDone:
			return cancel, true
		case c.New.Status == task.StatusPending && !c.New.DueAt.Equal(c.Old.DueAt):
			return reschedule(c)
		}
	}
	return Message{}, false
}

// reschedule builds the message from the new image; an image without a
// deadline or schedule token cannot give a correct schedule, so it gives
// nothing (the reconciler repairs the task from the table).
func reschedule(c task.Change) (Message, bool) {
	if c.New.DueAt.IsZero() || c.New.ScheduleToken == "" {
		return Message{}, false
	}
	return Message{Action: ActionReschedule, UserID: c.UserID, TaskID: c.TaskID,
		DueAt: c.New.DueAt.UTC(), ScheduleToken: c.New.ScheduleToken, EventID: c.EventID}, true
}
