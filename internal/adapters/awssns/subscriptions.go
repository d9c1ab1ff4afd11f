package awssns

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/unschedule/unschedule/internal/notify"
)

// SubscriptionsAPI is the SNS calls the PostAuthentication trigger makes;
// *sns.Client is one. They are also all it is granted: sns:ListSubscriptionsByTopic,
// sns:GetSubscriptionAttributes, sns:SetSubscriptionAttributes and
// sns:Subscribe, on its topics.
type SubscriptionsAPI interface {
	ListSubscriptionsByTopic(ctx context.Context, in *sns.ListSubscriptionsByTopicInput, opts ...func(*sns.Options)) (*sns.ListSubscriptionsByTopicOutput, error)
	GetSubscriptionAttributes(ctx context.Context, in *sns.GetSubscriptionAttributesInput, opts ...func(*sns.Options)) (*sns.GetSubscriptionAttributesOutput, error)
	SetSubscriptionAttributes(ctx context.Context, in *sns.SetSubscriptionAttributesInput, opts ...func(*sns.Options)) (*sns.SetSubscriptionAttributesOutput, error)
	Subscribe(ctx context.Context, in *sns.SubscribeInput, opts ...func(*sns.Options)) (*sns.SubscribeOutput, error)
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

// FilterPolicyAttribute is the subscription attribute holding the policy.
const FilterPolicyAttribute = "FilterPolicy"

// List implements notify.Subscriptions.
func (s *Subscriptions) List(ctx context.Context, topicArn, cursor string) (notify.SubscriptionPage, error) {
	in := &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topicArn)}
	if cursor != "" {
		in.NextToken = aws.String(cursor)
	}
	out, err := s.api.ListSubscriptionsByTopic(ctx, in)
	if err != nil {
		return notify.SubscriptionPage{}, wrap("ListSubscriptionsByTopic", err)
	}
	page := notify.SubscriptionPage{Cursor: aws.ToString(out.NextToken)}
	for _, sb := range out.Subscriptions {
		page.Subscriptions = append(page.Subscriptions, notify.Subscription{
			Arn: aws.ToString(sb.SubscriptionArn), Protocol: aws.ToString(sb.Protocol), Endpoint: aws.ToString(sb.Endpoint)})
	}
	return page, nil
}

// FilterPolicy implements notify.Subscriptions.
func (s *Subscriptions) FilterPolicy(ctx context.Context, subscriptionArn string) (string, error) {
	out, err := s.api.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(subscriptionArn)})
	if err != nil {
		return "", wrap("GetSubscriptionAttributes", err)
	}
	return out.Attributes[FilterPolicyAttribute], nil
}

// SetFilterPolicy implements notify.Subscriptions.
func (s *Subscriptions) SetFilterPolicy(ctx context.Context, subscriptionArn, policy string) error {
	_, err := s.api.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{
		SubscriptionArn: aws.String(subscriptionArn),
		AttributeName:   aws.String(FilterPolicyAttribute),
		AttributeValue:  aws.String(policy),
	})
	if err != nil {
		return wrap("SetSubscriptionAttributes", err)
	}
	return nil
}

// Subscribe implements notify.Subscriptions: an email subscription whose
// filter policy is set in the same call, so it never exists unfiltered.
// ReturnSubscriptionArn makes SNS return the ARN even while the
// subscription awaits confirmation.
func (s *Subscriptions) Subscribe(ctx context.Context, topicArn, email, policy string) (string, error) {
	out, err := s.api.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn:              aws.String(topicArn),
		Protocol:              aws.String("email"),
		Endpoint:              aws.String(email),
		Attributes:            map[string]string{FilterPolicyAttribute: policy},
		ReturnSubscriptionArn: true,
	})
	if err != nil {
		return "", wrap("Subscribe", err)
	}
	return aws.ToString(out.SubscriptionArn), nil
}
