package ses

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo/dynamotest"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

var dynalite string

func TestMain(m *testing.M) { os.Exit(testenv.RunWithDynalite(m, &dynalite)) }

// mail is a fake SES that answers each call with the next error of errs
// (nil: success) and counts the calls.
type mail struct {
	errs  []error
	calls []*sesv2.SendEmailInput
}

func (m *mail) SendEmail(_ context.Context, in *sesv2.SendEmailInput, _ ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error) {
	m.calls = append(m.calls, in)
	var err error
	if len(m.errs) > 0 {
		err, m.errs = m.errs[0], m.errs[1:]
	}
	if err != nil {
		return nil, err
	}
	return &sesv2.SendEmailOutput{MessageId: aws.String(fmt.Sprintf("msg-%d", len(m.calls)))}, nil
}

func newSender(t *testing.T, m *mail) *Sender {
	t.Helper()
	client := testenv.NewDynamoClient(dynalite)
	name := fmt.Sprintf("campaigns-%d", time.Now().UnixNano())
	dynamotest.CreateTable(t, client, campaigntable.CampaignTableInput(name))
	s, err := New(m, client, Config{Table: name, From: "news@example.com"}, clock.NewFake(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var msg = campaign.Message{IdempotencyKey: "send-c1-00000", To: "r@example.com", Subject: "Hello", Body: "Hi"}

func TestSendAtMostOncePerKey(t *testing.T) {
	ctx := context.Background()
	throttle := &types.TooManyRequestsException{Message: aws.String("slow down")}
	rejected := &types.MessageRejected{Message: aws.String("bad address")}
	timeout := errors.New("read tcp: i/o timeout") // no answer: outcome unknown
	server := &smithy.GenericAPIError{Code: "InternalFailure", Fault: smithy.FaultServer}
	cases := []struct {
		name      string
		errs      []error // SES's answers to the first and second Send
		first     error   // want errors.Is of the first Send (nil: success)
		second    error   // of the second Send
		calls     int     // SendEmail calls in all
		sentAfter bool    // Sent finds a receipt after both
	}{
		{"sent once, the second returns the receipt", nil, nil, nil, 1, true},
		{"a throttle frees the key: the retry sends", []error{throttle}, campaign.ErrRetryable, nil, 2, true},
		{"a rejection frees the key, is permanent", []error{rejected, rejected}, rejected, rejected, 2, false},
		{"a timeout leaves it sending: never sent again", []error{timeout}, ErrOutcomeUnknown, ErrOutcomeUnknown, 1, false},
		{"a server fault is an unknown outcome", []error{server}, ErrOutcomeUnknown, ErrOutcomeUnknown, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := &mail{errs: tc.errs}
			s := newSender(t, m)
			if _, err := s.Sent(ctx, msg.IdempotencyKey); !errors.Is(err, campaign.ErrNotSent) {
				t.Fatalf("Sent before = %v", err)
			}
			r1, err1 := s.Send(ctx, msg)
			r2, err2 := s.Send(ctx, msg)
			check := func(n int, err, want error) {
				if (want == nil && err != nil) || (want != nil && !errors.Is(err, want)) {
					t.Errorf("Send %d = %v, want %v", n, err, want)
				}
			}
			check(1, err1, tc.first)
			check(2, err2, tc.second)
			if len(m.calls) != tc.calls {
				t.Errorf("SendEmail called %d times, want %d", len(m.calls), tc.calls)
			}
			rc, err := s.Sent(ctx, msg.IdempotencyKey)
			if tc.sentAfter != (err == nil) {
				t.Fatalf("Sent after = %+v, %v; want a receipt: %v", rc, err, tc.sentAfter)
			}
			if tc.sentAfter && (rc.MessageID == "" || (err1 == nil && r1 != r2) || rc != r2) {
				t.Errorf("receipts %+v, %+v, recorded %+v: want one and the same", r1, r2, rc)
			}
		})
	}
	t.Run("the request", func(t *testing.T) {
		m := &mail{}
		if _, err := newSender(t, m).Send(ctx, msg); err != nil {
			t.Fatal(err)
		}
		in := m.calls[0]
		if aws.ToString(in.FromEmailAddress) != "news@example.com" || in.Destination.ToAddresses[0] != "r@example.com" ||
			aws.ToString(in.Content.Simple.Subject.Data) != "Hello" || aws.ToString(in.Content.Simple.Body.Text.Data) != "Hi" {
			t.Fatalf("SendEmail input %+v", in)
		}
	})
	t.Run("a rejection is permanent, not retryable", func(t *testing.T) {
		_, err := newSender(t, &mail{errs: []error{rejected}}).Send(ctx, msg)
		if err == nil || errors.Is(err, campaign.ErrRetryable) || errors.Is(err, ErrOutcomeUnknown) {
			t.Fatalf("Send = %v", err)
		}
	})
}
