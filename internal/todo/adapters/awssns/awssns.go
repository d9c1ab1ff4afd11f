// Package awssns is the SNS side of per-user notifications: a task.Notifier
// that publishes each expiry to the topic of its user's shard, and the
// subscription calls the PostAuthentication trigger makes
// (notify.Subscriptions).
package awssns

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/internal/todo/notify"
)

// UserIDAttribute is the message attribute that filter policies match.
const UserIDAttribute = "userId"

// ParseTopicArns reads the TOPIC_ARNS setting: the shard topics' ARNs,
// comma-separated, in shard order. The order is part of the data (users
// are subscribed on the topic at their shard's position), so it must be the
// same for every function and never be reordered.
func ParseTopicArns(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("no SNS topic ARNs given: set TOPIC_ARNS to the shard topics' ARNs, comma-separated, in shard order")
	}
	parts := strings.Split(s, ",")
	seen := map[string]bool{}
	out := make([]string, 0, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if !strings.HasPrefix(p, "arn:") || !strings.Contains(p, ":sns:") {
			return nil, fmt.Errorf("TOPIC_ARNS entry %d is not an SNS topic ARN (given %q): give arn:<partition>:sns:<region>:<account>:<name> values, comma-separated", i, p)
		}
		if seen[p] {
			return nil, fmt.Errorf("TOPIC_ARNS lists %q twice: each shard needs its own topic", p)
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}

// wrap adds the operation to an SNS error, and notify.ErrFilterPolicyLimit
// when SNS answered FilterPolicyLimitExceeded, notify.ErrSubscriptionNotFound
// when it answered NotFound.
func wrap(op string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "FilterPolicyLimitExceeded" {
		return fmt.Errorf("sns %s: %w: %w", op, notify.ErrFilterPolicyLimit, err)
	}
	if errors.As(err, &api) && api.ErrorCode() == "NotFound" {
		return fmt.Errorf("sns %s: %w: %w", op, notify.ErrSubscriptionNotFound, err)
	}
	return fmt.Errorf("sns %s: %w", op, err)
}
