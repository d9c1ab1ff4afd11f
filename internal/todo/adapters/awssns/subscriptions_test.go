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

	"github.com/unschedule/unschedule/internal/todo/notify"
)

// subsRecorder records every request and answers from its fields.
type subsRecorder struct {
	sub   []*sns.SubscribeInput
	unsub []*sns.UnsubscribeInput
	get   []*sns.GetSubscriptionAttributesInput
	attrs map[string]string
	err   error
}

func (r *subsRecorder) Subscribe(_ context.Context, in *sns.SubscribeInput, _ ...func(*sns.Options)) (*sns.SubscribeOutput, error) {
	r.sub = append(r.sub, in)
	if r.err != nil {
		return nil, r.err
	}
	return &sns.SubscribeOutput{SubscriptionArn: aws.String(aws.ToString(in.TopicArn) + ":s1")}, nil
}

func (r *subsRecorder) Unsubscribe(_ context.Context, in *sns.UnsubscribeInput, _ ...func(*sns.Options)) (*sns.UnsubscribeOutput, error) {
	r.unsub = append(r.unsub, in)
	if r.err != nil {
		return nil, r.err
	}
	return &sns.UnsubscribeOutput{}, nil
}

func (r *subsRecorder) GetSubscriptionAttributes(_ context.Context, in *sns.GetSubscriptionAttributesInput, _ ...func(*sns.Options)) (*sns.GetSubscriptionAttributesOutput, error) {
	r.get = append(r.get, in)
	if r.err != nil {
		return nil, r.err
	}
	return &sns.GetSubscriptionAttributesOutput{Attributes: r.attrs}, nil
}

func TestSubscriptionsCalls(t *testing.T) {
	const arn = "arn:aws:sns:eu-west-1:111122223333:unschedule-notify-0:abc"
	policy := notify.FilterPolicy("u1")
	r := &subsRecorder{}
	s, _ := NewSubscriptions(r)
	ctx := context.Background()

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

	if err := s.Unsubscribe(ctx, arn); err != nil || aws.ToString(r.unsub[0].SubscriptionArn) != arn {
		t.Errorf("Unsubscribe: %v, request %+v", err, r.unsub)
	}

	for _, tc := range []struct {
		attrs map[string]string
		want  bool
	}{
		{map[string]string{"PendingConfirmation": "true", "SubscriptionArn": arn}, false},
		{map[string]string{"PendingConfirmation": "false", "SubscriptionArn": arn}, true},
	} {
		r.attrs = tc.attrs
		got, err := s.Confirmed(ctx, arn)
		if err != nil || got != tc.want || aws.ToString(r.get[len(r.get)-1].SubscriptionArn) != arn {
			t.Errorf("Confirmed with %v = %t, %v", tc.attrs, got, err)
		}
	}
}

func TestSubscriptionsErrorMapping(t *testing.T) {
	limit := &types.FilterPolicyLimitExceededException{Message: aws.String("Filter policy limit exceeded")}
	generic := &smithy.GenericAPIError{Code: "FilterPolicyLimitExceeded", Message: "limit"}
	missing := &types.NotFoundException{Message: aws.String("Subscription does not exist")}
	taken := &types.InvalidParameterException{Message: aws.String("Invalid parameter: Attributes Reason: Subscription already exists with different attributes")}
	other := &types.InvalidParameterException{Message: aws.String("bad")}
	calls := map[string]func(s *Subscriptions) error{
		"Subscribe": func(s *Subscriptions) error {
			_, err := s.Subscribe(context.Background(), shardTopics[0], "a@x.io", "{}")
			return err
		},
		"Unsubscribe": func(s *Subscriptions) error { return s.Unsubscribe(context.Background(), "arn:x") },
		"Confirmed": func(s *Subscriptions) error {
			_, err := s.Confirmed(context.Background(), "arn:x")
			return err
		},
	}
	for _, tc := range []struct {
		name string
		err  error
		// want is the sentinel each call wraps (nil: none).
		want map[string]error
	}{
		{"typed limit error", limit, map[string]error{"Subscribe": notify.ErrFilterPolicyLimit, "Unsubscribe": notify.ErrFilterPolicyLimit, "Confirmed": notify.ErrFilterPolicyLimit}},
		{"limit by error code", generic, map[string]error{"Subscribe": notify.ErrFilterPolicyLimit, "Unsubscribe": notify.ErrFilterPolicyLimit, "Confirmed": notify.ErrFilterPolicyLimit}},
		{"not found", missing, map[string]error{"Subscribe": notify.ErrSubscriptionNotFound, "Unsubscribe": notify.ErrSubscriptionNotFound, "Confirmed": notify.ErrSubscriptionNotFound}},
		{"address taken", taken, map[string]error{"Subscribe": notify.ErrAddressTaken}},
		{"other error", other, nil},
	} {
		for op, call := range calls {
			t.Run(tc.name+"/"+op, func(t *testing.T) {
				s, _ := NewSubscriptions(&subsRecorder{err: tc.err})
				err := call(s)
				if err == nil || !errors.Is(err, tc.err) {
					t.Fatalf("err %v does not wrap %v", err, tc.err)
				}
				for _, sentinel := range []error{notify.ErrFilterPolicyLimit, notify.ErrSubscriptionNotFound, notify.ErrAddressTaken} {
					if got, want := errors.Is(err, sentinel), tc.want[op] == sentinel; got != want {
						t.Fatalf("errors.Is(err, %v) = %t for %v", sentinel, got, err)
					}
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
