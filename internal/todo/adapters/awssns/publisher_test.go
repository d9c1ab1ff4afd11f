package awssns

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

type publishRecorder struct {
	in  []*sns.PublishInput
	err error
}

func (p *publishRecorder) Publish(_ context.Context, in *sns.PublishInput, _ ...func(*sns.Options)) (*sns.PublishOutput, error) {
	p.in = append(p.in, in)
	if p.err != nil {
		return nil, p.err
	}
	return &sns.PublishOutput{MessageId: aws.String("m-1")}, nil
}

var shardTopics = []string{
	"arn:aws:sns:eu-west-1:111122223333:unschedule-notify-0",
	"arn:aws:sns:eu-west-1:111122223333:unschedule-notify-1",
	"arn:aws:sns:eu-west-1:111122223333:unschedule-notify-2",
}

func TestPublisherPublish(t *testing.T) {
	due := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		userID string
		// wantShard is pinned: notify.ShardFor of the user over 3 shards.
		wantShard int
	}{
		{"shard 0", "user-2", 0},
		{"shard 1", "a", 1},
		{"shard 2", "user-1", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := notify.ShardFor(tc.userID, 3); got != tc.wantShard {
				t.Fatalf("ShardFor = %d, want %d: the routing changed", got, tc.wantShard)
			}
			api := &publishRecorder{}
			p, err := NewPublisher(api, shardTopics)
			if err != nil {
				t.Fatal(err)
			}
			n := task.Notification{UserID: tc.userID, TaskID: "T1", Title: "Water plants", DueAt: due, Link: "https://x/#/tasks/T1"}
			if err := p.Publish(context.Background(), n); err != nil {
				t.Fatal(err)
			}
			if len(api.in) != 1 {
				t.Fatalf("%d publishes", len(api.in))
			}
			in := api.in[0]
			want := notify.FormatMessage(n)
			if aws.ToString(in.TopicArn) != shardTopics[tc.wantShard] {
				t.Errorf("topic %s, want %s", aws.ToString(in.TopicArn), shardTopics[tc.wantShard])
			}
			if aws.ToString(in.Subject) != want.Subject || aws.ToString(in.Message) != want.Body {
				t.Errorf("subject %q message %q", aws.ToString(in.Subject), aws.ToString(in.Message))
			}
			attr, ok := in.MessageAttributes["userId"]
			if !ok || aws.ToString(attr.DataType) != "String" || aws.ToString(attr.StringValue) != tc.userID || len(in.MessageAttributes) != 1 {
				t.Errorf("message attributes %+v", in.MessageAttributes)
			}
		})
	}
}

func TestPublisherErrors(t *testing.T) {
	boom := errors.New("throttled")
	for _, tc := range []struct {
		name      string
		n         task.Notification
		apiErr    error
		wantCalls int
		wantIs    error
	}{
		{"sns error is wrapped", task.Notification{UserID: "u", Title: "x"}, boom, 1, boom},
		{"no user id is refused before any call", task.Notification{Title: "x"}, nil, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &publishRecorder{err: tc.apiErr}
			p, _ := NewPublisher(api, shardTopics)
			err := p.Publish(context.Background(), tc.n)
			if err == nil || len(api.in) != tc.wantCalls {
				t.Fatalf("err %v after %d calls", err, len(api.in))
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Fatalf("err %v does not wrap %v", err, tc.wantIs)
			}
		})
	}
}

func TestNewPublisherGuards(t *testing.T) {
	if _, err := NewPublisher(nil, shardTopics); err == nil {
		t.Error("nil api accepted")
	}
	if _, err := NewPublisher(&publishRecorder{}, nil); err == nil {
		t.Error("no topics accepted")
	}
}

func TestParseTopicArns(t *testing.T) {
	a, b := shardTopics[0], shardTopics[1]
	for _, tc := range []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{"one", a, []string{a}, ""},
		{"two in order, spaces trimmed", " " + b + " , " + a, []string{b, a}, ""},
		{"empty", "", nil, "set TOPIC_ARNS"},
		{"blank", "  ", nil, "set TOPIC_ARNS"},
		{"empty entry", a + ",," + b, nil, "entry 1"},
		{"trailing comma", a + ",", nil, "entry 1"},
		{"not an sns arn", "arn:aws:sqs:eu-west-1:1:q", nil, "not an SNS topic ARN"},
		{"duplicate", a + "," + a, nil, "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTopicArns(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
