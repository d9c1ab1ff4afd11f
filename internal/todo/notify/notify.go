// Package notify holds the rules of per-user expiry notifications: which
// SNS topic shard a user belongs to, the filter policy that routes a
// message to exactly one subscription, each user's notification setting
// and the one subscription recorded as theirs, what the PostAuthentication
// trigger does on every sign-in, who the PreSignUp trigger lets in, and the text of
// the message. It imports no AWS SDK; internal/todo/adapters/awssns speaks SNS.
package notify

import (
	"errors"

	"github.com/unschedule/unschedule/internal/todo/todometrics"
)

// Metric names written by the triggers (CloudWatch EMF, internal/core/metrics).
// The alarms of the notification construct watch the first two.
const (
	// MetricSubscribeErrors counts every error the PostAuthentication
	// trigger swallowed (FilterPolicyLimitExceeded included).
	MetricSubscribeErrors = todometrics.SubscribeErrors
	// MetricFilterPolicyLimitExceeded counts the subscribes and repairs that
	// SNS refused because the topic holds its quota of filter policies:
	// the signal to add shards or raise the quota.
	MetricFilterPolicyLimitExceeded = todometrics.FilterPolicyLimitExceeded
	// MetricSubscribed counts new subscriptions (each sends a confirmation email).
	MetricSubscribed = todometrics.Subscribed
)

// ErrFilterPolicyLimit is what the SNS adapter wraps when SNS answers
// FilterPolicyLimitExceeded: the topic (or the account) holds its quota of
// filter policies.
var ErrFilterPolicyLimit = errors.New("sns filter policy limit exceeded")
