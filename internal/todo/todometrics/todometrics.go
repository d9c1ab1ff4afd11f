// Package todometrics names the to-do app's own metrics and functions
// (its API and its PostAuthentication trigger), beside its code; the
// core's are in internal/core/metrics, whose Recorder writes both.
package todometrics

// Function names of the to-do app (the Function dimension).
const (
	FunctionAPI      = "api"
	FunctionPostAuth = "postauth"
)

// TasksCreated counts the tasks the API created (the dashboard's
// lifecycle graph).
const TasksCreated = "TasksCreated"

// ApiServerErrors counts the API handler's 5xx answers (a client mistake
// is never a 5xx); the API construct alarms on it.
const ApiServerErrors = "ApiServerErrors"

// PostAuthentication trigger (FunctionPostAuth).
const (
	// SubscribeErrors counts every error the trigger swallowed
	// (FilterPolicyLimitExceeded included).
	SubscribeErrors = "NotificationSubscribeErrors"
	// FilterPolicyLimitExceeded counts the subscribes and repairs that SNS
	// refused because the topic holds its quota of filter policies.
	FilterPolicyLimitExceeded = "FilterPolicyLimitExceeded"
	// Subscribed counts new subscriptions (each sends a confirmation
	// email).
	Subscribed = "NotificationSubscribed"
)

// ErrorMetrics lists, per function of the to-do app, every metric that
// counts work lost, skipped or failing: each must have an alarm (its
// constructs build them; the app's operations construct gets this list
// with the core's).
var ErrorMetrics = map[string][]string{
	FunctionAPI:      {ApiServerErrors},
	FunctionPostAuth: {SubscribeErrors, FilterPolicyLimitExceeded},
}
