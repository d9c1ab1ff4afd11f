package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// Fault is a kind of injected fault. Result.Faults counts each.
type Fault string

// The faults the simulation injects, and a few actions and observations
// the report counts beside them, in report order (Faults). A fault's
// first words say which workload or timer alone has it, if any.
var (
	FaultStreamReplay          = fault("stream-record-replayed")            // a shard delivers records again (its position moves back)
	FaultStreamRedelivered     = fault("stream-batch-redelivered")          // a batch was enqueued but not checkpointed: it comes again
	FaultEnqueueRejected       = fault("enqueue-rejected")                  // SQS refused a message; the adapter stops there
	FaultEnqueueUnknown        = fault("enqueue-outcome-unknown")           // the messages were sent but the call failed
	FaultAckLost               = fault("sqs-ack-lost")                      // the worker's delete of a message failed: it comes again
	FaultVisibilityTimeout     = fault("visibility-timeout-mid-processing") // a stalled worker applied its batch after a second one
	FaultWorkerCrash           = fault("worker-crash-before-ack")           // the worker crashed after its scheduler calls, before any ack
	FaultSchedulerThrottled    = fault("scheduler-throttled")               // a scheduler call was refused
	FaultSchedulerResponseLost = fault("scheduler-response-lost")           // a scheduler call took effect but its caller saw an error
	FaultScheduleCreateFailed  = fault("schedule-create-failed")            // the task API's schedule create failed
	FaultScheduleRecordFailed  = fault("schedule-record-failed")            // the API's record of a schedule (Task.ScheduledFor) failed
	FaultFiredTwice            = fault("schedule-fired-twice")              // a schedule invoked the expiry function twice
	FaultFiredLate             = fault("schedule-fired-late")               // a schedule invoked the expiry function late
	FaultFiredEarly            = fault("schedule-fired-early")              // EventBridge Scheduler: up to 59 s early (earlyBy)
	FaultExpireWriteFailed     = fault("expire-write-failed")               // the expiry's conditional write (or an item's claim) failed
	FaultPublishFailed         = fault("publish-failed")                    // SNS, SES or an adopter's target refused
	FaultCrashAfterPublish     = fault("crash-after-publish")               // a crash after a publish, send or target run, before its record
	FaultMarkNotifiedFailed    = fault("mark-notified-failed")              // recording the notification (or delivery) failed
	FaultRemindWriteFailed     = fault("remind-claim-failed")               // a reminder's conditional claim failed
	FaultMarkRemindedFailed    = fault("mark-reminded-failed")              // recording a published reminder failed
	FaultReconcilerInterleaved = fault("reconciler-run-interleaved")        // a reconciler run with a small budget, among everything else
	FaultDeadlineRace          = fault("deadline-change-racing-fire")       // a change or completion in the instant the old schedule fires
	FaultSignInSNSFailed       = fault("signin-sns-failed")                 // an SNS call of the PostAuthentication trigger failed
	FaultConcurrentFire        = fault("concurrent-duplicate-fire")         // a duplicate invocation between a claim and its publish
	FaultDLQRedriven           = fault("expiry-dlq-redriven")               // a recovery: the operator redrove a dead invocation at the end
	FaultDuplicateExecution    = fault("sfn-duplicate-execution")           // Step Functions: the execution invoked the function twice
	FaultStopRace              = fault("sfn-stop-racing-wait-end")          // Step Functions: a stop came after the Wait ended
	FaultStaleExecution        = fault("sfn-stale-execution-at-rest")       // Step Functions, observed: see staleTolerated
	FaultTTLDeleteLate         = fault("ttl-delete-late")                   // TTL: a marker deleted over 15 minutes after its due time
	FaultStreamRedeliveredTTL  = fault("ttl-deletion-delivered-twice")      // TTL: the stream delivered a deletion twice
	FaultWriterFiredState      = fault("writer-completed-with-fired-state") // observed: see completeWithFiredState

	FaultSchedulerError    = fault("scheduler-error")              // campaigns: a scheduler call failed, not throttled
	FaultFireDropped       = fault("schedule-fire-dropped-to-dlq") // campaigns: a fire went to the dead-letter queue
	FaultCrashAfterClaim   = fault("send-crash-after-claim")       // campaigns: the send worker crashed between claim and send
	FaultBounce            = fault("send-bounced")                 // campaigns: a recipient's address bounces
	FaultProvisionKilled   = fault("provision-run-killed")         // campaigns: a provisioning run died part-way
	FaultCampaignCancelled = fault("campaign-cancelled-midway")    // campaigns, an action: cancelled part-way
	FaultSenderRemoved     = fault("sender-removed-midway")        // campaigns, an action: the owner left the sender group
	FaultSendRecovered     = fault("stale-running-send-recovered") // campaigns, observed: a stale Running task finished or requeued
	FaultScheduleRecreated = fault("send-schedule-recreated")      // campaigns, observed: a missing schedule created again
	FaultSendRetimed       = fault("overdue-send-retimed")         // campaigns, observed: an overdue task moved into its windows
	FaultSendDispatched    = fault("overdue-send-dispatched")      // campaigns, observed: an overdue task handed to the send function

	FaultTimerLost          = fault("timer-lost")                    // adopters: a waiting timer lost; only the reconciler re-arms
	FaultTableCallFailed    = fault("table-call-failed")             // adopters: an app's table call refused; it retries once
	FaultTableAnswerLost    = fault("table-answer-lost")             // adopters: an app's write took effect, its answer lost
	FaultEventCancelled     = fault("event-cancelled")               // future events, an action: a Cancel deleted a waiting event
	FaultUnregisteredTarget = fault("event-for-unregistered-target") // future events, an action: an event for an unknown target
	FaultLateActivity       = fault("late-activity-write")           // deferred jobs, an action: an activity written after its window fired
)

// faults are the kinds in report order; fault adds one.
var faults []Fault

func fault(name string) Fault {
	faults = append(faults, Fault(name))
	return Fault(name)
}

// Faults lists every fault kind, in report order.
func Faults() []Fault { return slices.Clone(faults) }

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

// schedulerFaults injects into every scheduler call of r (API create,
// worker, reconciler) of any workload on a table a refusal before it and,
// for a write that succeeded, a lost answer after it; blame notes each
// against the schedule's item, inAPI (nil: never) says the call is the
// task API's create.
func (w *core) schedulerFaults(r *inmem.Remote, blame func(name string), inAPI func() bool) {
	kind := func(op string, k Fault) Fault {
		if op == "Arm" && inAPI != nil && inAPI() {
			return FaultScheduleCreateFailed
		}
		return k
	}
	r.Fault = func(op, name string) (error, bool) {
		if !w.inject(kind(op, FaultSchedulerThrottled), 0.10) {
			return nil, false
		}
		blame(name)
		return fmt.Errorf("scheduler %s %s: %w", op, name, errThrottled), false
	}
	r.Lost = func(op, name string) error {
		if op == "Get" || op == "List" || !w.inject(kind(op, FaultSchedulerResponseLost), 0.04) {
			return nil
		}
		blame(name)
		return fmt.Errorf("scheduler %s %s: %w", op, name, errTimeout)
	}
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
