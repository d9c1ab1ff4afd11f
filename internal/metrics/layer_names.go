package metrics

// Execution layers (internal/layers): what the Step Functions and TTL
// layers add to the expiry function (FunctionExpiry).
const (
	// TTLDispatched counts the TTL deletions of markers that the expiry
	// function handed the firing core.
	TTLDispatched = "TTLDispatched"
	// TTLDispatchFailed counts the TTL deletions whose firing failed; the
	// stream retries them (batch item failures), then the mapping's
	// on-failure destination gets them.
	TTLDispatchFailed = "TTLDispatchFailed"
)
