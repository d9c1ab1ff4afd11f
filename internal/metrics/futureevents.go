package metrics

// The future-events handler (constructs/futureevents) and the
// deferred-jobs dispatcher (constructs/deferredjobs).
const (
	FunctionFutureEvents     = "futureevents"
	FunctionDeferredDispatch = "deferreddispatch"
)

// Future-events handler (FunctionFutureEvents).
const (
	// FutureEventsDelivered counts the targets invoked successfully.
	FutureEventsDelivered = "FutureEventsDelivered"
	// FutureEventsRefused counts the firings whose target is not
	// registered (or whose item is not a future event): they fail.
	FutureEventsRefused = "FutureEventsRefused"
	// FutureEventsTargetFailed counts the failed invokes of a registered
	// target (the core's timer retries the firing).
	FutureEventsTargetFailed = "FutureEventsTargetFailed"
)

// Deferred-jobs dispatcher (FunctionDeferredDispatch).
const (
	// DeferredJobsQueued counts the jobs sent to the job queue.
	DeferredJobsQueued = "DeferredJobsQueued"
	// DeferredJobsMalformed counts the stream records that are no marker;
	// they are skipped.
	DeferredJobsMalformed = "DeferredJobsMalformed"
	// DeferredJobsQueueFailed counts the jobs the queue refused; their
	// records are retried.
	DeferredJobsQueueFailed = "DeferredJobsQueueFailed"
	// DeferredJobsIgnored counts the records that are no TTL deletion
	// (none reach the function while the mapping's filter is in place).
	DeferredJobsIgnored = "DeferredJobsIgnored"
)
