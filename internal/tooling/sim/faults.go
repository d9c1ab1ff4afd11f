package sim

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// Fault is a kind of injected fault. Result.Faults counts each.
type Fault string

// The faults the simulation injects (and a few actions and observations
// the report counts beside them).
const (
	// FaultStreamReplay: a shard delivers records again (its position
	// moves back).
	FaultStreamReplay Fault = "stream-record-replayed"
	// FaultStreamRedelivered: a batch was enqueued but not checkpointed;
	// it comes again.
	FaultStreamRedelivered Fault = "stream-batch-redelivered"
	// FaultEnqueueRejected: SQS refused a message; the adapter stops there.
	FaultEnqueueRejected Fault = "enqueue-rejected"
	// FaultEnqueueUnknown: the messages were sent but the call failed.
	FaultEnqueueUnknown Fault = "enqueue-outcome-unknown"
	// FaultAckLost: the worker's delete of a message failed; it comes again.
	FaultAckLost Fault = "sqs-ack-lost"
	// FaultVisibilityTimeout: a worker stalled past the visibility timeout
	// and applied its stale batch after a second worker finished it.
	FaultVisibilityTimeout Fault = "visibility-timeout-mid-processing"
	// FaultWorkerCrash: the worker crashed after its scheduler calls,
	// before any ack.
	FaultWorkerCrash Fault = "worker-crash-before-ack"
	// FaultSchedulerThrottled: a scheduler call was refused.
	FaultSchedulerThrottled Fault = "scheduler-throttled"
	// FaultSchedulerResponseLost: a scheduler call took effect but its
	// caller saw an error.
	FaultSchedulerResponseLost Fault = "scheduler-response-lost"
	// FaultScheduleCreateFailed: the API's schedule create failed.
	FaultScheduleCreateFailed Fault = "schedule-create-failed"
	// FaultFiredTwice: a schedule invoked the expiry function twice.
	FaultFiredTwice Fault = "schedule-fired-twice"
	// FaultFiredLate: a schedule invoked the expiry function late.
	FaultFiredLate Fault = "schedule-fired-late"
	// FaultFiredEarly (EventBridge Scheduler): a schedule fired up to 59 s
	// early, within the minute of its expression; the expiry must fail it
	// so that the retry brings it back (its schedule deleted itself).
	FaultFiredEarly Fault = "schedule-fired-early"
	// FaultScheduleRecordFailed: the API's record of a schedule as made
	// (Task.ScheduledFor) failed; the reconciler reads it back.
	FaultScheduleRecordFailed Fault = "schedule-record-failed"
	// FaultExpireWriteFailed: the expiry's conditional write failed (the
	// table was unavailable).
	FaultExpireWriteFailed Fault = "expire-write-failed"
	// FaultPublishFailed: SNS refused the notification (campaigns: SES
	// refused the send; adopters: the target refused).
	FaultPublishFailed Fault = "publish-failed"
	// FaultCrashAfterPublish: a crash after the notification, send or
	// target run, before its record.
	FaultCrashAfterPublish Fault = "crash-after-publish"
	// FaultMarkNotifiedFailed: recording the notification failed.
	FaultMarkNotifiedFailed Fault = "mark-notified-failed"
	// FaultRemindWriteFailed: a reminder's conditional claim failed.
	FaultRemindWriteFailed Fault = "remind-claim-failed"
	// FaultMarkRemindedFailed: recording a published reminder failed.
	FaultMarkRemindedFailed Fault = "mark-reminded-failed"
	// FaultReconcilerInterleaved: a reconciler run with a small budget
	// interleaved with everything else.
	FaultReconcilerInterleaved Fault = "reconciler-run-interleaved"
	// FaultDeadlineRace: a deadline change or completion in the instant
	// the old schedule fires.
	FaultDeadlineRace Fault = "deadline-change-racing-fire"
	// FaultSignInSNSFailed: an SNS call of the PostAuthentication trigger
	// failed.
	FaultSignInSNSFailed Fault = "signin-sns-failed"
	// FaultConcurrentFire: a duplicate invocation ran between the first's
	// conditional write (or claim) and its publish (Config.ConcurrentFires).
	FaultConcurrentFire Fault = "concurrent-duplicate-fire"
	// FaultDLQRedriven (a recovery): the operator redrove a dead invocation
	// at the end of the history.
	FaultDLQRedriven Fault = "expiry-dlq-redriven"
	// FaultDuplicateExecution (Step Functions): the execution invoked the
	// expiry function twice.
	FaultDuplicateExecution Fault = "sfn-duplicate-execution"
	// FaultStopRace (Step Functions): a stop came after the Wait ended.
	FaultStopRace Fault = "sfn-stop-racing-wait-end"
	// FaultStaleExecution (Step Functions, observed): at rest, a stale
	// execution that no cancel or move can name was running; its claim
	// skips it (docs/decisions/stale-executions.md).
	FaultStaleExecution Fault = "sfn-stale-execution-at-rest"
	// FaultTTLDeleteLate (TTL): the sweeper deleted a marker more than 15
	// minutes after its due time.
	FaultTTLDeleteLate Fault = "ttl-delete-late"
	// FaultStreamRedeliveredTTL (TTL): the stream delivered a deletion twice.
	FaultStreamRedeliveredTTL Fault = "ttl-deletion-delivered-twice"
	// FaultWriterFiredState (observed): a writer completed a Pending task
	// by writing the fired state, without the library's claim marks.
	FaultWriterFiredState Fault = "writer-completed-with-fired-state"

	// FaultSchedulerError (campaigns): a scheduler call failed with an
	// error that is not a throttle.
	FaultSchedulerError Fault = "scheduler-error"
	// FaultFireDropped (campaigns): a fire went to the dead-letter queue.
	FaultFireDropped Fault = "schedule-fire-dropped-to-dlq"
	// FaultCrashAfterClaim (campaigns): the send worker crashed after its
	// claim, before the send.
	FaultCrashAfterClaim Fault = "send-crash-after-claim"
	// FaultBounce (campaigns): a recipient's address bounces.
	FaultBounce Fault = "send-bounced"
	// FaultProvisionKilled (campaigns): a provisioning run died part-way.
	FaultProvisionKilled Fault = "provision-run-killed"
	// FaultCampaignCancelled (campaigns, an action): cancelled part-way.
	FaultCampaignCancelled Fault = "campaign-cancelled-midway"
	// FaultSenderRemoved (campaigns, an action): the owner left the sender
	// group part-way.
	FaultSenderRemoved Fault = "sender-removed-midway"
	// FaultSendRecovered (campaigns, observed): the reconciler finished or
	// re-queued a stale Running task.
	FaultSendRecovered Fault = "stale-running-send-recovered"
	// FaultScheduleRecreated (campaigns, observed): the reconciler created
	// a missing schedule again.
	FaultScheduleRecreated Fault = "send-schedule-recreated"
	// FaultSendRetimed (campaigns, observed): the reconciler moved an
	// overdue task outside the windows to the next usable minute.
	FaultSendRetimed Fault = "overdue-send-retimed"
	// FaultSendDispatched (campaigns, observed): the reconciler handed an
	// overdue task to the send function.
	FaultSendDispatched Fault = "overdue-send-dispatched"

	// FaultTimerLost (adopters): a waiting timer was lost; only the
	// reconciler arms the item again.
	FaultTimerLost Fault = "timer-lost"
	// FaultTableCallFailed (adopters): a client's or writer's call was
	// refused; the app retries once.
	FaultTableCallFailed Fault = "table-call-failed"
	// FaultTableAnswerLost (adopters): a client's or writer's write took
	// effect but its caller saw an error; the app retries once.
	FaultTableAnswerLost Fault = "table-answer-lost"
	// FaultEventCancelled (future events, an action): a Cancel deleted a
	// waiting event.
	FaultEventCancelled Fault = "event-cancelled"
	// FaultUnregisteredTarget (future events, an action): an event named
	// a target not registered with the construct.
	FaultUnregisteredTarget Fault = "event-for-unregistered-target"
	// FaultLateActivity (deferred jobs, an action): an activity from
	// before a window was written after the window fired.
	FaultLateActivity Fault = "late-activity-write"
)

// Faults lists every fault kind, in report order.
func Faults() []Fault {
	return []Fault{FaultStreamReplay, FaultStreamRedelivered, FaultEnqueueRejected, FaultEnqueueUnknown,
		FaultAckLost, FaultVisibilityTimeout, FaultWorkerCrash, FaultSchedulerThrottled, FaultSchedulerResponseLost,
		FaultScheduleCreateFailed, FaultScheduleRecordFailed, FaultFiredTwice, FaultFiredLate, FaultFiredEarly, FaultExpireWriteFailed, FaultPublishFailed,
		FaultCrashAfterPublish, FaultMarkNotifiedFailed, FaultRemindWriteFailed, FaultMarkRemindedFailed, FaultReconcilerInterleaved, FaultDeadlineRace,
		FaultSignInSNSFailed, FaultConcurrentFire, FaultDLQRedriven,
		FaultDuplicateExecution, FaultStopRace, FaultStaleExecution, FaultTTLDeleteLate, FaultStreamRedeliveredTTL,
		FaultWriterFiredState,
		FaultSchedulerError, FaultFireDropped, FaultCrashAfterClaim, FaultBounce, FaultProvisionKilled,
		FaultCampaignCancelled, FaultSenderRemoved, FaultSendRecovered, FaultScheduleRecreated, FaultSendRetimed, FaultSendDispatched,
		FaultTimerLost, FaultTableCallFailed, FaultTableAnswerLost, FaultEventCancelled, FaultUnregisteredTarget, FaultLateActivity}
}

var (
	errThrottled = errors.New("ThrottlingException: rate exceeded (injected)")
	errTimeout   = errors.New("RequestTimeout: no response (injected)")
	errCrash     = errors.New("function crashed (injected)")
	errTable     = errors.New("ProvisionedThroughputExceededException (injected)")
)

// inject decides whether to inject a fault of kind k, with probability p
// scaled by the history's fault intensity, and counts it.
func (w *core) inject(k Fault, p float64) bool {
	if !w.chance(p) {
		return false
	}
	w.count(k)
	return true
}

// chance draws whether a fault with probability p (scaled by the
// intensity) happens, without counting it: for a fault decided ahead of
// the moment it shows (count it then).
func (w *core) chance(p float64) bool {
	return w.faultsOn && w.rng.Float64() < p*w.intensity
}

func (w *core) count(k Fault) {
	w.res.Faults[k]++
	w.injected++
}

// earlyBy is how far ahead of now this tick's firing reaches on the
// EventBridge Scheduler timer: zero, or (FaultFiredEarly) 1 to 59 s, so
// that the schedules due within it fire early.
func (w *core) earlyBy() time.Duration {
	if !kindOf(w.cfg.Timer).FiresEarly || !w.chance(0.05) {
		return 0
	}
	return time.Duration(1+w.rng.Intn(59)) * time.Second
}

// firedEarly reports whether a firing of sc runs before its time
// (FaultFiredEarly): its ErrTooEarly failure is that fault's, and the
// retry that follows it comes after the time.
func (w *core) firedEarly(sc contract.Schedule, err error) bool {
	return w.now().Before(sc.At) && errors.Is(err, task.ErrTooEarly)
}

// faultyScheduler injects throttles and lost responses into every
// scheduler call (API create, worker, reconciler) of any workload on a
// table.
type faultyScheduler struct {
	w  *core
	in inmem.TimerScheduler
	// blame notes an injected fault against the schedule's item.
	blame func(name string)
	// inAPI reports whether the call is the task API's create (nil:
	// never).
	inAPI func() bool
}

func (s faultyScheduler) do(op, name string, f func() error) error {
	k := FaultSchedulerThrottled
	if op == "Arm" && s.inAPI != nil && s.inAPI() {
		k = FaultScheduleCreateFailed
	}
	if s.w.inject(k, 0.10) {
		s.blame(name)
		return fmt.Errorf("scheduler %s %s: %w", op, name, errThrottled)
	}
	err := f()
	if err == nil && op != "Get" && op != "List" {
		if k == FaultSchedulerThrottled {
			k = FaultSchedulerResponseLost
		}
		if s.w.inject(k, 0.04) {
			s.blame(name)
			return fmt.Errorf("scheduler %s %s: %w", op, name, errTimeout)
		}
	}
	return err
}

func (s faultyScheduler) Arm(ctx context.Context, sc contract.Schedule) error {
	return s.do("Arm", sc.Name, func() error { return s.in.Arm(ctx, sc) })
}

func (s faultyScheduler) Move(ctx context.Context, sc contract.Schedule, from time.Time) error {
	return s.do("Move", sc.Name, func() error { return s.in.Move(ctx, sc, from) })
}

func (s faultyScheduler) Disarm(ctx context.Context, name string, at time.Time) error {
	return s.do("Disarm", name, func() error { return s.in.Disarm(ctx, name, at) })
}

func (s faultyScheduler) Get(ctx context.Context, name string, at time.Time) (contract.Schedule, error) {
	var out contract.Schedule
	err := s.do("Get", name, func() error {
		var err error
		out, err = s.in.Get(ctx, name, at)
		return err
	})
	return out, err
}

func (s faultyScheduler) List(ctx context.Context, page task.PageRequest) (timer.Page, error) {
	var out timer.Page
	err := s.do("List", "", func() error {
		var err error
		out, err = s.in.List(ctx, page)
		return err
	})
	return out, err
}

// faultyStore is the store the task service uses: its expiry write and
// notification record can fail.
type faultyStore struct {
	task.Store
	w *world
}

func (s faultyStore) Expire(ctx context.Context, userID, taskID string, dueAt, now time.Time) (task.Task, error) {
	if s.w.inject(FaultExpireWriteFailed, 0.05) {
		return task.Task{}, fmt.Errorf("expire %s: %w", taskID, errTable)
	}
	return s.Store.Expire(ctx, userID, taskID, dueAt, now)
}

func (s faultyStore) MarkScheduled(ctx context.Context, userID, taskID string, dueAt time.Time) error {
	if s.w.inject(FaultScheduleRecordFailed, 0.05) {
		return fmt.Errorf("mark scheduled %s: %w", taskID, errTable)
	}
	return s.Store.MarkScheduled(ctx, userID, taskID, dueAt)
}

func (s faultyStore) ClaimReminder(ctx context.Context, userID, taskID string, dueAt, remindAt, now time.Time, lease time.Duration) (task.Task, error) {
	if s.w.inject(FaultRemindWriteFailed, 0.05) {
		return task.Task{}, fmt.Errorf("claim reminder %s: %w", taskID, errTable)
	}
	return s.Store.ClaimReminder(ctx, userID, taskID, dueAt, remindAt, now, lease)
}

func (s faultyStore) MarkReminded(ctx context.Context, userID, taskID string, remindAt time.Time) error {
	if s.w.inject(FaultMarkRemindedFailed, 0.04) {
		s.w.task(taskID).remDupAllowed++
		return fmt.Errorf("mark reminded %s: %w", taskID, errTable)
	}
	return s.Store.MarkReminded(ctx, userID, taskID, remindAt)
}

func (s faultyStore) MarkNotified(ctx context.Context, userID, taskID string, at time.Time) error {
	if s.w.inject(FaultMarkNotifiedFailed, 0.04) {
		s.w.task(taskID).dupAllowed++
		return fmt.Errorf("mark notified %s: %w", taskID, errTable)
	}
	return s.Store.MarkNotified(ctx, userID, taskID, at)
}
