package awssns

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// PublishAPI is the SNS call the Publisher makes; *sns.Client is one.
type PublishAPI interface {
	Publish(ctx context.Context, in *sns.PublishInput, opts ...func(*sns.Options)) (*sns.PublishOutput, error)
}

// Publisher sends expiry notifications: to the topic of the user's shard,
// with the userId message attribute that the user's filter policy matches.
type Publisher struct {
	api    PublishAPI
	topics []string
}

var _ task.Notifier = (*Publisher)(nil)

// NewPublisher publishes through api to the shard topics topicArns, in
// shard order (see ParseTopicArns).
func NewPublisher(api PublishAPI, topicArns []string) (*Publisher, error) {
	if api == nil {
		return nil, errors.New("awssns: an SNS client is required")
	}
	if len(topicArns) == 0 {
		return nil, errors.New("awssns: at least one topic ARN is required")
	}
	return &Publisher{api: api, topics: append([]string(nil), topicArns...)}, nil
}

// Publish implements task.Notifier.
func (p *Publisher) Publish(ctx context.Context, n task.Notification) error {
	if n.UserID == "" {
		return errors.New("awssns: a notification needs a user id")
	}
	m := notify.FormatMessage(n)
	_, err := p.api.Publish(ctx, &sns.PublishInput{
		TopicArn: aws.String(notify.TopicFor(p.topics, n.UserID)),
		Subject:  aws.String(m.Subject),
		Message:  aws.String(m.Body),
		MessageAttributes: map[string]types.MessageAttributeValue{
			UserIDAttribute: {DataType: aws.String("String"), StringValue: aws.String(n.UserID)},
		},
	})
	if err != nil {
		return wrap("Publish", err)
	}
	return nil
}
