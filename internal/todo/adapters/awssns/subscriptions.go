package awssns

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/unschedule/unschedule/internal/todo/notify"
)

// SubscriptionsAPI is the SNS calls the notification rules make;
// *sns.Client is one. They are also all the PostAuthentication trigger and
// the API function are granted: sns:Subscribe on the shard topics, and
// sns:Unsubscribe and sns:GetSubscriptionAttributes (which have no
// resource-level permissions).
type SubscriptionsAPI interface {
	Subscribe(ctx context.Context, in *sns.SubscribeInput, opts ...func(*sns.Options)) (*sns.SubscribeOutput, error)
	Unsubscribe(ctx context.Context, in *sns.UnsubscribeInput, opts ...func(*sns.Options)) (*sns.UnsubscribeOutput, error)
	GetSubscriptionAttributes(ctx context.Context, in *sns.GetSubscriptionAttributesInput, opts ...func(*sns.Options)) (*sns.GetSubscriptionAttributesOutput, error)
}

// Subscriptions is notify.Subscriptions over SNS.
type Subscriptions struct {
	api SubscriptionsAPI
}

var _ notify.Subscriptions = (*Subscriptions)(nil)

// NewSubscriptions wraps an SNS client.
func NewSubscriptions(api SubscriptionsAPI) (*Subscriptions, error) {
	if api == nil {
		return nil, errors.New("awssns: an SNS client is required")
	}
	return &Subscriptions{api: api}, nil
}

// Attributes of a subscription that the adapter reads or sets.
const (
	FilterPolicyAttribute        = "FilterPolicy"
	PendingConfirmationAttribute = "PendingConfirmation"
)

// Subscribe implements notify.Subscriptions: an email subscription whose
// filter policy is set in the same call, so it never exists unfiltered.
// ReturnSubscriptionArn makes SNS return the ARN even while the
// subscription awaits confirmation. SNS refuses to subscribe an endpoint
// that the topic holds with other attributes (another user's filter
// policy): that is notify.ErrAddressTaken.
func (s *Subscriptions) Subscribe(ctx context.Context, topicArn, email, policy string) (string, error) {
	out, err := s.api.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn:              aws.String(topicArn),
		Protocol:              aws.String("email"),
		Endpoint:              aws.String(email),
		Attributes:            map[string]string{FilterPolicyAttribute: policy},
		ReturnSubscriptionArn: true,
	})
	var bad *types.InvalidParameterException
	if errors.As(err, &bad) && strings.Contains(strings.ToLower(aws.ToString(bad.Message)), "already exists") {
		return "", fmt.Errorf("sns Subscribe: %w: %w", notify.ErrAddressTaken, err)
	}
	if err != nil {
		return "", wrap("Subscribe", err)
	}
	return aws.ToString(out.SubscriptionArn), nil
}

// Unsubscribe implements notify.Subscriptions.
func (s *Subscriptions) Unsubscribe(ctx context.Context, subscriptionArn string) error {
	_, err := s.api.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(subscriptionArn)})
	if err != nil {
		return wrap("Unsubscribe", err)
	}
	return nil
}

// Confirmed implements notify.Subscriptions: the PendingConfirmation
// attribute of the subscription.
func (s *Subscriptions) Confirmed(ctx context.Context, subscriptionArn string) (bool, error) {
	out, err := s.api.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(subscriptionArn)})
	if err != nil {
		return false, wrap("GetSubscriptionAttributes", err)
	}
	return out.Attributes[PendingConfirmationAttribute] != "true", nil
}
