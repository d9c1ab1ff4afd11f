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

// Deferred-jobs dispatcher (FunctionDeferredDispatch), the core's Target.
const (
	// DeferredJobsQueued counts the jobs sent to the job queue.
	DeferredJobsQueued = "DeferredJobsQueued"
	// DeferredJobsMalformed counts the fired items that are no deferred
	// job; their firing fails.
	DeferredJobsMalformed = "DeferredJobsMalformed"
	// DeferredJobsQueueFailed counts the jobs the queue refused; their
	// firing is retried.
	DeferredJobsQueueFailed = "DeferredJobsQueueFailed"
)
