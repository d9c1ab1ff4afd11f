package smokeaws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cftypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	ciptypes "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/internal/todo/adapters/awssns"
	"github.com/unschedule/unschedule/internal/tooling/smoke"
)

func TestUserIDAttributeIsThePublishers(t *testing.T) {
	if smoke.UserIDAttribute != awssns.UserIDAttribute {
		t.Fatalf("smoke checks %q, the publisher sets %q", smoke.UserIDAttribute, awssns.UserIDAttribute)
	}
}

type fakeCF struct {
	out *cloudformation.DescribeStacksOutput
	err error
}

func (f fakeCF) DescribeStacks(context.Context, *cloudformation.DescribeStacksInput, ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error) {
	return f.out, f.err
}

func TestStacks(t *testing.T) {
	missing := &smithy.GenericAPIError{Code: "ValidationError", Message: "Stack with id Unschedule-dev does not exist"}
	one := &cloudformation.DescribeStacksOutput{Stacks: []cftypes.Stack{{Outputs: []cftypes.Output{
		{OutputKey: aws.String("ApiUrl"), OutputValue: aws.String("https://x/")}}}}}
	for _, tc := range []struct {
		name    string
		api     fakeCF
		exists  bool
		wantErr bool
	}{
		{"exists", fakeCF{out: one}, true, false},
		{"missing", fakeCF{err: missing}, false, false},
		{"other validation error", fakeCF{err: &smithy.GenericAPIError{Code: "ValidationError", Message: "bad name"}}, false, true},
		{"access denied", fakeCF{err: &smithy.GenericAPIError{Code: "AccessDenied"}}, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := AWS{CloudFormation: tc.api}.Tags(context.Background(), "Unschedule-dev")
			if exists, failed := err == nil, err != nil && !errors.Is(err, smoke.ErrStackNotFound); exists != tc.exists || failed != tc.wantErr {
				t.Fatalf("%t %v", exists, err)
			}
		})
	}
	if m, err := (AWS{CloudFormation: fakeCF{out: one}}).Outputs(context.Background(), "s"); err != nil || m["ApiUrl"] != "https://x/" {
		t.Fatalf("outputs %v %v", m, err)
	}
	t.Run("tags", func(t *testing.T) {
		tagged := &cloudformation.DescribeStacksOutput{Stacks: []cftypes.Stack{{Tags: []cftypes.Tag{
			{Key: aws.String(smoke.RunTag), Value: aws.String("run1")}}}}}
		for _, tc := range []struct {
			name    string
			api     fakeCF
			want    map[string]string
			wantErr error
		}{
			{"tagged", fakeCF{out: tagged}, map[string]string{smoke.RunTag: "run1"}, nil},
			{"missing", fakeCF{err: missing}, nil, smoke.ErrStackNotFound},
			{"no stack in the answer", fakeCF{out: &cloudformation.DescribeStacksOutput{}}, nil, smoke.ErrStackNotFound},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got, err := AWS{CloudFormation: tc.api}.Tags(context.Background(), "Unschedule-dev")
				if !errors.Is(err, tc.wantErr) || fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Fatalf("%v %v, want %v %v", got, err, tc.want, tc.wantErr)
				}
			})
		}
		if _, err := (AWS{CloudFormation: fakeCF{err: &smithy.GenericAPIError{Code: "AccessDenied"}}}).Tags(context.Background(), "s"); err == nil || errors.Is(err, smoke.ErrStackNotFound) {
			t.Fatalf("access denied read as %v", err)
		}
	})
}

type fakeCognito struct {
	CognitoAPI
	signUp *cip.SignUpOutput
	auth   *cip.AdminInitiateAuthOutput
	err    error
	in     []any
}

func (f *fakeCognito) SignUp(_ context.Context, in *cip.SignUpInput, _ ...func(*cip.Options)) (*cip.SignUpOutput, error) {
	f.in = append(f.in, in)
	return f.signUp, f.err
}

func (f *fakeCognito) AdminInitiateAuth(_ context.Context, in *cip.AdminInitiateAuthInput, _ ...func(*cip.Options)) (*cip.AdminInitiateAuthOutput, error) {
	f.in = append(f.in, in)
	return f.auth, f.err
}

func (f *fakeCognito) AdminDeleteUser(_ context.Context, in *cip.AdminDeleteUserInput, _ ...func(*cip.Options)) (*cip.AdminDeleteUserOutput, error) {
	return nil, f.err
}

func (f *fakeCognito) DeleteUserPoolClient(_ context.Context, in *cip.DeleteUserPoolClientInput, _ ...func(*cip.Options)) (*cip.DeleteUserPoolClientOutput, error) {
	return nil, f.err
}

func TestUsers(t *testing.T) {
	ctx := context.Background()
	t.Run("sign up needs PreSignUp's confirmation", func(t *testing.T) {
		f := &fakeCognito{signUp: &cip.SignUpOutput{UserSub: aws.String("sub-1"), UserConfirmed: false}}
		// The unconfirmed user exists: its sub comes back with the error,
		// so the run deletes it.
		if sub, err := (AWS{Cognito: f}).SignUp(ctx, "c", "a@example.com", "p"); err == nil || !strings.Contains(err.Error(), "PreSignUp") || sub != "sub-1" {
			t.Fatalf("%q %v", sub, err)
		}
		f.err, f.signUp = errors.New("UsernameExistsException"), nil
		if sub, err := (AWS{Cognito: f}).SignUp(ctx, "c", "a@example.com", "p"); err == nil || sub != "" {
			t.Fatalf("a failed sign-up returned sub %q (%v): the run would delete a user it did not create", sub, err)
		}
		f.err, f.signUp = nil, &cip.SignUpOutput{UserSub: aws.String("sub-1")}
		f.signUp.UserConfirmed = true
		if sub, err := (AWS{Cognito: f}).SignUp(ctx, "c", "a@example.com", "p"); err != nil || sub != "sub-1" {
			t.Fatalf("%q %v", sub, err)
		}
	})
	t.Run("sign in takes the ID token, refuses a challenge", func(t *testing.T) {
		f := &fakeCognito{auth: &cip.AdminInitiateAuthOutput{ChallengeName: ciptypes.ChallengeNameTypeNewPasswordRequired}}
		if _, err := (AWS{Cognito: f}).SignIn(ctx, "pool", "c", "a@example.com", "p"); err == nil {
			t.Fatal("a challenge passed")
		}
		f.auth = &cip.AdminInitiateAuthOutput{AuthenticationResult: &ciptypes.AuthenticationResultType{IdToken: aws.String("id")}}
		tok, err := (AWS{Cognito: f}).SignIn(ctx, "pool", "c", "a@example.com", "p")
		in := f.in[len(f.in)-1].(*cip.AdminInitiateAuthInput)
		if err != nil || tok != "id" || in.AuthFlow != ciptypes.AuthFlowTypeAdminUserPasswordAuth || in.AuthParameters["USERNAME"] != "a@example.com" {
			t.Fatalf("%q %v %+v", tok, err, in)
		}
	})
	t.Run("deleting what is gone is fine", func(t *testing.T) {
		if err := (AWS{Cognito: &fakeCognito{err: &ciptypes.UserNotFoundException{}}}).DeleteUser(ctx, "pool", "a@example.com"); err != nil {
			t.Fatal(err)
		}
		if err := (AWS{Cognito: &fakeCognito{err: &ciptypes.ResourceNotFoundException{}}}).DeleteClient(ctx, "pool", "c"); err != nil {
			t.Fatal(err)
		}
		if err := (AWS{Cognito: &fakeCognito{err: errors.New("throttled")}}).DeleteUser(ctx, "pool", "a@example.com"); err == nil {
			t.Fatal("a real failure was swallowed")
		}
	})
}

type fakeSNS struct {
	in  *sns.SubscribeInput
	out string
	err error
}

func (f *fakeSNS) Subscribe(_ context.Context, in *sns.SubscribeInput, _ ...func(*sns.Options)) (*sns.SubscribeOutput, error) {
	f.in = in
	return &sns.SubscribeOutput{SubscriptionArn: aws.String(f.out)}, nil
}

func (f *fakeSNS) Unsubscribe(context.Context, *sns.UnsubscribeInput, ...func(*sns.Options)) (*sns.UnsubscribeOutput, error) {
	return nil, f.err
}

func TestSubscriptions(t *testing.T) {
	f := &fakeSNS{out: "arn:aws:sns:eu-west-1:1:t-0:abc"}
	arn, err := AWS{SNS: f}.Subscribe(context.Background(), "arn:aws:sns:eu-west-1:1:t-0", "arn:aws:sqs:eu-west-1:1:q", `{"userId":["s"]}`)
	if err != nil || arn != f.out || aws.ToString(f.in.Protocol) != "sqs" || f.in.Attributes["FilterPolicy"] != `{"userId":["s"]}` ||
		f.in.Attributes["RawMessageDelivery"] != "" || !f.in.ReturnSubscriptionArn {
		t.Fatalf("%q %v %+v", arn, err, f.in)
	}
	f.out = "pending confirmation"
	if _, err := (AWS{SNS: f}).Subscribe(context.Background(), "t", "q", "{}"); err == nil {
		t.Fatal("a pending subscription passed")
	}
	if err := (AWS{SNS: &fakeSNS{err: &snstypes.NotFoundException{}}}).Unsubscribe(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
}

type fakeSQS struct {
	SQSAPI
	in *sqs.CreateQueueInput
}

func (f *fakeSQS) CreateQueue(_ context.Context, in *sqs.CreateQueueInput, _ ...func(*sqs.Options)) (*sqs.CreateQueueOutput, error) {
	f.in = in
	return &sqs.CreateQueueOutput{QueueUrl: aws.String("https://sqs.example/" + aws.ToString(in.QueueName))}, nil
}

// TestQueueCarriesTheRunTag: the queue is created with the run's tags,
// encrypted, with the topic's policy.
func TestQueueCarriesTheRunTag(t *testing.T) {
	f := &fakeSQS{}
	url, err := AWS{SQS: f}.CreateQueue(context.Background(), "unschedule-smoke-run1", `{"p":1}`, map[string]string{smoke.RunTag: "run1"})
	if err != nil || url != "https://sqs.example/unschedule-smoke-run1" {
		t.Fatalf("%q %v", url, err)
	}
	if f.in.Tags[smoke.RunTag] != "run1" || f.in.Attributes["Policy"] != `{"p":1}` || f.in.Attributes["SqsManagedSseEnabled"] != "true" {
		t.Fatalf("create queue input %+v", f.in)
	}
}
