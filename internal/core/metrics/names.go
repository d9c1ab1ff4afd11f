package metrics

// The one list of the core's metric names. Functions write them; the
// constructs' Metric...() methods, their alarms and the operations
// dashboard read the same constants, so a renamed metric cannot leave an
// alarm watching nothing. Each adopter names its own beside its code.

// Stream processor (FunctionStreamProcessor).
const (
	// Enqueued counts the messages put on the FIFO queue.
	Enqueued = "Enqueued"
	// Ignored counts the records with nothing to do.
	Ignored = "Ignored"
	// EnqueueFailed counts the messages the queue refused; their records
	// are retried (batch item failures).
	EnqueueFailed = "EnqueueFailed"
	// Undeliverable counts the records whose message could never be
	// handled (it lacks its key); they are skipped.
	Undeliverable = "Undeliverable"
	// MalformedRecords counts the stream records that could not be
	// decoded; they are skipped.
	MalformedRecords = "MalformedRecords"
)

// Cancel worker (FunctionCancelWorker). Cancelled and Rescheduled are
// lifecycle metrics (below).
const (
	// Recreated counts the reschedules that found no schedule (the old
	// one fired and deleted itself) and created it at the new due time.
	Recreated = "Recreated"
	// ScheduleCreated counts the schedules the stream path created for an
	// item that its writer did not schedule itself.
	ScheduleCreated = "ScheduleCreated"
	// AlreadyGone counts the cancels that found no schedule (success).
	AlreadyGone = "AlreadyGone"
	// Malformed counts the messages that can never be handled; they go on
	// failing until the queue moves them to its dead-letter queue.
	Malformed = "Malformed"
	// RetryableFailures counts the messages that failed for a reason that
	// may pass (throttling, a 5xx, anything unknown).
	RetryableFailures = "RetryableFailures"
	// ScheduleRefused counts the messages whose schedule the execution
	// timer refuses for good (a due time beyond the Step Functions
	// timer's horizon): they are acknowledged, not retried, and that
	// item has no schedule until it changes.
	ScheduleRefused = "ScheduleRefused"
)

// Firing function (FunctionExpiry), the core's firing. ItemsFired and
// DeliveryLagSeconds are lifecycle metrics (below).
const (
	// FireBadInput counts the invocations whose payload could not be
	// read: a schedule that can never fire its item.
	FireBadInput = "FireBadInput"
	// FireErrors counts the invocations that failed and are retried.
	FireErrors = "FireErrors"
	// FireInProgress counts the invocations that found another attempt
	// holding the delivery claim; they are retried.
	FireInProgress = "FireInProgress"
	// EarlyFirings counts the invocations that came before their item's
	// due (or reminder) time; they ran nothing and are retried.
	EarlyFirings = "EarlyFirings"
	// FireSkipped counts the invocations with nothing to do (the item
	// moved on, or its target already ran).
	FireSkipped = "FireSkipped"
	// RemindersSent counts the reminders the firing function published
	// (a reminder schedule's firing whose claim held).
	RemindersSent = "RemindersSent"
	// RemindersSkipped counts the reminder firings with nothing to do (the
	// task was completed, deleted, expired or moved, or already reminded).
	RemindersSkipped = "RemindersSkipped"
)

// Reconciler (FunctionReconciler), one per Result count, written once per
// run.
const (
	SchedulesCreated   = "SchedulesCreated"
	SchedulesMoved     = "SchedulesMoved"
	SchedulesDeleted   = "SchedulesDeleted"
	RepairFlagsCleared = "RepairFlagsCleared"
	SchedulesConfirmed = "SchedulesConfirmed"
	// ReconcilerErrors counts the repairs that failed in a run.
	ReconcilerErrors = "Errors"
	// ItemsChecked, SchedulesChecked, SchedulerCalls, Repaired and
	// LeftOver are a run's cost, work and backlog: LeftOver above zero
	// means a pass did not fit one run.
	ItemsChecked     = "ItemsChecked"
	SchedulesChecked = "SchedulesChecked"
	SchedulerCalls   = "SchedulerCalls"
	Repaired         = "Repaired"
	LeftOver         = "LeftOver"
	// PassesCompleted is 1 for a run that completed a pass, else 0. Its
	// Sum over an interval is 0 when passes stopped completing, and
	// missing when no run reported at all.
	PassesCompleted = "PassesCompleted"
)

// ErrorMetrics lists, per function of the core, every metric that counts
// work lost, skipped or failing: each must have an alarm (the operations
// construct builds one per entry, and a test checks that none is
// missing). An adopter lists its own functions' beside its code.
var ErrorMetrics = map[string][]string{
	FunctionExpiry:          {FireBadInput, FireErrors},
	FunctionStreamProcessor: {MalformedRecords, Undeliverable, EnqueueFailed},
	FunctionCancelWorker:    {Malformed, RetryableFailures, ScheduleRefused},
	FunctionReconciler:      {ReconcilerErrors},
}
