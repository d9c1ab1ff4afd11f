package awssns

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/internal/notify"
)

// subsRecorder records every request and answers from its fields.
type subsRecorder struct {
	list  []*sns.ListSubscriptionsByTopicInput
	get   []*sns.GetSubscriptionAttributesInput
	set   []*sns.SetSubscriptionAttributesInput
	sub   []*sns.SubscribeInput
	pages []*sns.ListSubscriptionsByTopicOutput
	attrs map[string]string
	err   error
}

func (r *subsRecorder) ListSubscriptionsByTopic(_ context.Context, in *sns.ListSubscriptionsByTopicInput, _ ...func(*sns.Options)) (*sns.ListSubscriptionsByTopicOutput, error) {
	r.list = append(r.list, in)
	if r.err != nil {
		return nil, r.err
	}
	return r.pages[len(r.list)-1], nil
}

func (r *subsRecorder) GetSubscriptionAttributes(_ context.Context, in *sns.GetSubscriptionAttributesInput, _ ...func(*sns.Options)) (*sns.GetSubscriptionAttributesOutput, error) {
	r.get = append(r.get, in)
	if r.err != nil {
		return nil, r.err
	}
	return &sns.GetSubscriptionAttributesOutput{Attributes: r.attrs}, nil
}

func (r *subsRecorder) SetSubscriptionAttributes(_ context.Context, in *sns.SetSubscriptionAttributesInput, _ ...func(*sns.Options)) (*sns.SetSubscriptionAttributesOutput, error) {
	r.set = append(r.set, in)
	if r.err != nil {
		return nil, r.err
	}
	return &sns.SetSubscriptionAttributesOutput{}, nil
}

func (r *subsRecorder) Subscribe(_ context.Context, in *sns.SubscribeInput, _ ...func(*sns.Options)) (*sns.SubscribeOutput, error) {
	r.sub = append(r.sub, in)
	if r.err != nil {
		return nil, r.err
	}
	return &sns.SubscribeOutput{SubscriptionArn: aws.String(aws.ToString(in.TopicArn) + ":s1")}, nil
}

func TestSubscriptionsList(t *testing.T) {
	topic := shardTopics[0]
	r := &subsRecorder{pages: []*sns.ListSubscriptionsByTopicOutput{
		{Subscriptions: []types.Subscription{
			{SubscriptionArn: aws.String(topic + ":s1"), Protocol: aws.String("email"), Endpoint: aws.String("a@x.io")},
			{SubscriptionArn: aws.String("PendingConfirmation"), Protocol: aws.String("email"), Endpoint: aws.String("b@x.io")},
		}, NextToken: aws.String("tok")},
		{Subscriptions: []types.Subscription{{SubscriptionArn: aws.String(topic + ":s3"), Protocol: aws.String("sqs"), Endpoint: aws.String("arn:q")}}},
	}}
	s, _ := NewSubscriptions(r)
	p1, err := s.List(context.Background(), topic, "")
	if err != nil {
		t.Fatal(err)
	}
	p2, err := s.List(context.Background(), topic, p1.Cursor)
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(r.list[0].TopicArn) != topic || r.list[0].NextToken != nil {
		t.Errorf("first request %+v", r.list[0])
	}
	if aws.ToString(r.list[1].NextToken) != "tok" {
		t.Errorf("second request token %v", aws.ToString(r.list[1].NextToken))
	}
	want1 := notify.SubscriptionPage{Cursor: "tok", Subscriptions: []notify.Subscription{
		{Arn: topic + ":s1", Protocol: "email", Endpoint: "a@x.io"},
		{Arn: notify.PendingConfirmation, Protocol: "email", Endpoint: "b@x.io"}}}
	if !reflect.DeepEqual(p1, want1) {
		t.Errorf("page 1 %+v", p1)
	}
	if p2.Cursor != "" || len(p2.Subscriptions) != 1 || p2.Subscriptions[0].Protocol != "sqs" {
		t.Errorf("page 2 %+v", p2)
	}
}

func TestSubscriptionsCalls(t *testing.T) {
	const arn = "arn:aws:sns:eu-west-1:111122223333:unschedule-notify-0:abc"
	policy := notify.FilterPolicy("u1")
	r := &subsRecorder{attrs: map[string]string{"FilterPolicy": policy, "Owner": "1"}}
	s, _ := NewSubscriptions(r)
	ctx := context.Background()

	got, err := s.FilterPolicy(ctx, arn)
	if err != nil || got != policy || aws.ToString(r.get[0].SubscriptionArn) != arn {
		t.Errorf("FilterPolicy = %q, %v; request %+v", got, err, r.get[0])
	}

	if err := s.SetFilterPolicy(ctx, arn, policy); err != nil {
		t.Fatal(err)
	}
	if in := r.set[0]; aws.ToString(in.SubscriptionArn) != arn || aws.ToString(in.AttributeName) != "FilterPolicy" || aws.ToString(in.AttributeValue) != policy {
		t.Errorf("SetSubscriptionAttributes request %+v", in)
	}

	subArn, err := s.Subscribe(ctx, shardTopics[1], "ada@example.com", policy)
	if err != nil || subArn != shardTopics[1]+":s1" {
		t.Fatalf("Subscribe = %q, %v", subArn, err)
	}
	in := r.sub[0]
	if aws.ToString(in.TopicArn) != shardTopics[1] || aws.ToString(in.Protocol) != "email" ||
		aws.ToString(in.Endpoint) != "ada@example.com" || !in.ReturnSubscriptionArn ||
		!reflect.DeepEqual(in.Attributes, map[string]string{"FilterPolicy": policy}) {
		t.Errorf("Subscribe request %+v", in)
	}
}

func TestSubscriptionsMissingPolicyReadsEmpty(t *testing.T) {
	s, _ := NewSubscriptions(&subsRecorder{attrs: map[string]string{"Owner": "1"}})
	got, err := s.FilterPolicy(context.Background(), "arn:x")
	if err != nil || got != "" {
		t.Fatalf("FilterPolicy = %q, %v; want empty", got, err)
	}
}

func TestSubscriptionsErrorMapping(t *testing.T) {
	limit := &types.FilterPolicyLimitExceededException{Message: aws.String("Filter policy limit exceeded")}
	generic := &smithy.GenericAPIError{Code: "FilterPolicyLimitExceeded", Message: "limit"}
	other := &types.InvalidParameterException{Message: aws.String("bad")}
	calls := map[string]func(s *Subscriptions) error{
		"List": func(s *Subscriptions) error {
			_, err := s.List(context.Background(), shardTopics[0], "")
			return err
		},
		"FilterPolicy": func(s *Subscriptions) error {
			_, err := s.FilterPolicy(context.Background(), "arn:x")
			return err
		},
		"SetFilterPolicy": func(s *Subscriptions) error {
			return s.SetFilterPolicy(context.Background(), "arn:x", "{}")
		},
		"Subscribe": func(s *Subscriptions) error {
			_, err := s.Subscribe(context.Background(), shardTopics[0], "a@x.io", "{}")
			return err
		},
	}
	for _, tc := range []struct {
		name      string
		err       error
		wantLimit bool
	}{
		{"typed limit error", limit, true},
		{"limit by error code", generic, true},
		{"other error", other, false},
	} {
		for op, call := range calls {
			t.Run(tc.name+"/"+op, func(t *testing.T) {
				s, _ := NewSubscriptions(&subsRecorder{err: tc.err})
				err := call(s)
				if err == nil || !errors.Is(err, tc.err) {
					t.Fatalf("err %v does not wrap %v", err, tc.err)
				}
				if got := errors.Is(err, notify.ErrFilterPolicyLimit); got != tc.wantLimit {
					t.Fatalf("errors.Is(err, ErrFilterPolicyLimit) = %t for %v", got, err)
				}
			})
		}
	}
}

func TestNewSubscriptionsGuards(t *testing.T) {
	if _, err := NewSubscriptions(nil); err == nil {
		t.Fatal("nil api accepted")
	}
}
