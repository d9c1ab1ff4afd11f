package metrics

// Timers (internal/core/timerspec): what the Step Functions and TTL
// timers add to the firing function (FunctionExpiry).
const (
	// TTLDispatched counts the TTL deletions of markers that the firing
	// function handed the firing core.
	TTLDispatched = "TTLDispatched"
	// TTLDispatchFailed counts the TTL deletions whose firing failed; the
	// stream retries them (batch item failures), then the mapping's
	// on-failure destination gets them.
	TTLDispatchFailed = "TTLDispatchFailed"
)

// TTL watch (FunctionTTLWatch): the TTL timer's periodic look for markers
// DynamoDB has not deleted long after their expiry (TTL off on the
// attribute, or deletions far behind). A marker that is never deleted
// makes no stream record, so only a look at the table can see it.
const (
	// FunctionTTLWatch is the function that scans for overdue markers.
	FunctionTTLWatch = "ttlwatch"
	// TTLOverdueMarkers is how many markers expired more than MaxLateness
	// ago and still exist (a gauge: set on every run, 0 included).
	TTLOverdueMarkers = "TTLOverdueMarkers"
	// TTLOldestMarkerAgeSeconds is now minus the expiry time of the
	// oldest marker still in the table (0 when there is none).
	TTLOldestMarkerAgeSeconds = "TTLOldestMarkerAgeSeconds"
)
