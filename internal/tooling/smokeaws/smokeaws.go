// Package smokeaws is the AWS side of the smoke test (internal/tooling/smoke):
// CloudFormation, Cognito, SQS and SNS, each behind the few SDK calls it
// makes, and the task table's timer as internal/ops finds it.
package smokeaws

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cftypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	ciptypes "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/ops"
	"github.com/unschedule/unschedule/internal/tooling/smoke"
)

// AWS is smoke.AWS on the SDK's clients; New makes them from a config.
type AWS struct {
	// Config reaches the stack's functions and timer (internal/ops).
	Config         aws.Config
	CloudFormation CloudFormationAPI
	Cognito        CognitoAPI
	SQS            SQSAPI
	SNS            SNSAPI
}

// New is AWS on the clients of cfg.
func New(cfg aws.Config) AWS {
	return AWS{Config: cfg, CloudFormation: cloudformation.NewFromConfig(cfg), Cognito: cip.NewFromConfig(cfg),
		SQS: sqs.NewFromConfig(cfg), SNS: sns.NewFromConfig(cfg)}
}

// CloudFormationAPI is what AWS calls of CloudFormation.
type CloudFormationAPI interface {
	DescribeStacks(ctx context.Context, in *cloudformation.DescribeStacksInput, opts ...func(*cloudformation.Options)) (*cloudformation.DescribeStacksOutput, error)
}

// stack is the stack's description; ErrStackNotFound when there is none
// (CloudFormation answers a ValidationError "Stack with id X does not
// exist").
func (a AWS) stack(ctx context.Context, name string) (cftypes.Stack, error) {
	out, err := a.CloudFormation.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	var api smithy.APIError
	if (errors.As(err, &api) && api.ErrorCode() == "ValidationError" && strings.Contains(api.ErrorMessage(), "does not exist")) ||
		(err == nil && len(out.Stacks) == 0) {
		return cftypes.Stack{}, fmt.Errorf("stack %s: %w", name, smoke.ErrStackNotFound)
	}
	if err != nil {
		return cftypes.Stack{}, fmt.Errorf("describe stack %s: %w", name, err)
	}
	return out.Stacks[0], nil
}

// Outputs implements smoke.AWS.
func (a AWS) Outputs(ctx context.Context, stack string) (map[string]string, error) {
	st, err := a.stack(ctx, stack)
	m := map[string]string{}
	for _, o := range st.Outputs {
		m[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	return m, err
}

// Tags implements smoke.AWS.
func (a AWS) Tags(ctx context.Context, stack string) (map[string]string, error) {
	st, err := a.stack(ctx, stack)
	m := map[string]string{}
	for _, t := range st.Tags {
		m[aws.ToString(t.Key)] = aws.ToString(t.Value)
	}
	return m, err
}

// Timer implements smoke.AWS: the table's timer as the operator's command
// finds it (ops.Open discovers the stack) and the functions build it.
func (a AWS) Timer(ctx context.Context, stack, table string) (timer.Reader, error) {
	w, err := ops.Open(ctx, a.Config, stack)
	if err != nil {
		return nil, err
	}
	t, err := w.Stack.Table(table)
	if err != nil {
		return nil, err
	}
	return w.Timer(t)
}

// deleted is a delete's error, nil when the service answered that there
// is no such thing (E) to delete.
func deleted[E error](err error, format string, args ...any) error {
	var nf E
	if err == nil || errors.As(err, &nf) {
		return nil
	}
	return fmt.Errorf(format+": %w", append(args, err)...)
}

// CognitoAPI is what AWS calls of Cognito.
type CognitoAPI interface {
	SignUp(ctx context.Context, in *cip.SignUpInput, opts ...func(*cip.Options)) (*cip.SignUpOutput, error)
	AdminDeleteUser(ctx context.Context, in *cip.AdminDeleteUserInput, opts ...func(*cip.Options)) (*cip.AdminDeleteUserOutput, error)
	CreateUserPoolClient(ctx context.Context, in *cip.CreateUserPoolClientInput, opts ...func(*cip.Options)) (*cip.CreateUserPoolClientOutput, error)
	DeleteUserPoolClient(ctx context.Context, in *cip.DeleteUserPoolClientInput, opts ...func(*cip.Options)) (*cip.DeleteUserPoolClientOutput, error)
	AdminInitiateAuth(ctx context.Context, in *cip.AdminInitiateAuthInput, opts ...func(*cip.Options)) (*cip.AdminInitiateAuthOutput, error)
}

// SignUp implements smoke.AWS, through the web app's client.
func (a AWS) SignUp(ctx context.Context, clientID, email, password string) (string, error) {
	out, err := a.Cognito.SignUp(ctx, &cip.SignUpInput{ClientId: aws.String(clientID), Username: aws.String(email),
		Password: aws.String(password), UserAttributes: []ciptypes.AttributeType{{Name: aws.String("email"), Value: aws.String(email)}}})
	if err != nil {
		return "", fmt.Errorf("sign up %s: %w", email, err)
	}
	if !out.UserConfirmed {
		// The user exists: its sub goes back so the run deletes it.
		return aws.ToString(out.UserSub), fmt.Errorf("sign up %s: the user is not confirmed: the PreSignUp trigger should confirm every allowed address", email)
	}
	return aws.ToString(out.UserSub), nil
}

// DeleteUser implements smoke.AWS.
func (a AWS) DeleteUser(ctx context.Context, poolID, email string) error {
	_, err := a.Cognito.AdminDeleteUser(ctx, &cip.AdminDeleteUserInput{UserPoolId: aws.String(poolID), Username: aws.String(email)})
	return deleted[*ciptypes.UserNotFoundException](err, "delete user %s", email)
}

// CreateClient implements smoke.AWS.
func (a AWS) CreateClient(ctx context.Context, poolID, name string) (string, error) {
	out, err := a.Cognito.CreateUserPoolClient(ctx, &cip.CreateUserPoolClientInput{UserPoolId: aws.String(poolID),
		ClientName: aws.String(name), GenerateSecret: false,
		ExplicitAuthFlows: []ciptypes.ExplicitAuthFlowsType{ciptypes.ExplicitAuthFlowsTypeAllowAdminUserPasswordAuth,
			ciptypes.ExplicitAuthFlowsTypeAllowRefreshTokenAuth}})
	if err != nil {
		return "", fmt.Errorf("create app client %s: %w", name, err)
	}
	if out.UserPoolClient == nil {
		return "", fmt.Errorf("create app client %s: no client in the answer", name)
	}
	return aws.ToString(out.UserPoolClient.ClientId), nil
}

// SignIn implements smoke.AWS through a temporary app client that allows
// ADMIN_USER_PASSWORD_AUTH (docs/deploying.md, "Smoke test").
func (a AWS) SignIn(ctx context.Context, poolID, clientID, email, password string) (string, error) {
	out, err := a.Cognito.AdminInitiateAuth(ctx, &cip.AdminInitiateAuthInput{UserPoolId: aws.String(poolID),
		ClientId: aws.String(clientID), AuthFlow: ciptypes.AuthFlowTypeAdminUserPasswordAuth,
		AuthParameters: map[string]string{"USERNAME": email, "PASSWORD": password}})
	if err != nil {
		return "", fmt.Errorf("sign in %s: %w", email, err)
	}
	if out.ChallengeName != "" || out.AuthenticationResult == nil || aws.ToString(out.AuthenticationResult.IdToken) == "" {
		return "", fmt.Errorf("sign in %s: no tokens (challenge %q)", email, out.ChallengeName)
	}
	return aws.ToString(out.AuthenticationResult.IdToken), nil
}

// DeleteClient implements smoke.AWS.
func (a AWS) DeleteClient(ctx context.Context, poolID, clientID string) error {
	_, err := a.Cognito.DeleteUserPoolClient(ctx, &cip.DeleteUserPoolClientInput{UserPoolId: aws.String(poolID), ClientId: aws.String(clientID)})
	return deleted[*ciptypes.ResourceNotFoundException](err, "delete app client %s", clientID)
}

// SQSAPI is what AWS calls of SQS.
type SQSAPI interface {
	CreateQueue(ctx context.Context, in *sqs.CreateQueueInput, opts ...func(*sqs.Options)) (*sqs.CreateQueueOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	DeleteQueue(ctx context.Context, in *sqs.DeleteQueueInput, opts ...func(*sqs.Options)) (*sqs.DeleteQueueOutput, error)
}

// CreateQueue implements smoke.AWS: encrypted (SSE-SQS, which SNS can
// send to without a key policy), with the policy that lets the user's
// topic send.
func (a AWS) CreateQueue(ctx context.Context, name, policy string, tags map[string]string) (string, error) {
	out, err := a.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Tags: tags, Attributes: map[string]string{
		string(sqstypes.QueueAttributeNamePolicy):                 policy,
		string(sqstypes.QueueAttributeNameSqsManagedSseEnabled):   "true",
		string(sqstypes.QueueAttributeNameMessageRetentionPeriod): "3600",
	}})
	if err != nil {
		return "", fmt.Errorf("create queue %s: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

// Receive implements smoke.AWS: one long poll of up to 20 s.
func (a AWS) Receive(ctx context.Context, url string, wait time.Duration) ([]string, error) {
	out, err := a.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
		WaitTimeSeconds: int32(min(max(wait, 0), 20*time.Second) / time.Second)})
	if err != nil {
		return nil, fmt.Errorf("receive: %w", err)
	}
	var bodies []string
	for _, m := range out.Messages {
		bodies = append(bodies, aws.ToString(m.Body))
		if _, err := a.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
			return bodies, fmt.Errorf("delete message: %w", err)
		}
	}
	return bodies, nil
}

// DeleteQueue implements smoke.AWS.
func (a AWS) DeleteQueue(ctx context.Context, url string) error {
	_, err := a.SQS.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
	return deleted[*sqstypes.QueueDoesNotExist](err, "delete queue %s", url)
}

// SNSAPI is what AWS calls of SNS.
type SNSAPI interface {
	Subscribe(ctx context.Context, in *sns.SubscribeInput, opts ...func(*sns.Options)) (*sns.SubscribeOutput, error)
	Unsubscribe(ctx context.Context, in *sns.UnsubscribeInput, opts ...func(*sns.Options)) (*sns.UnsubscribeOutput, error)
}

// Subscribe implements smoke.AWS: a pending confirmation is an error. Raw
// message delivery stays off: the envelope carries what the run checks.
func (a AWS) Subscribe(ctx context.Context, topicArn, queueArn, filterPolicy string) (string, error) {
	out, err := a.SNS.Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(topicArn), Protocol: aws.String("sqs"),
		Endpoint: aws.String(queueArn), ReturnSubscriptionArn: true,
		Attributes: map[string]string{"FilterPolicy": filterPolicy, "FilterPolicyScope": "MessageAttributes"}})
	if err != nil {
		return "", fmt.Errorf("subscribe %s to %s: %w", queueArn, topicArn, err)
	}
	arn := aws.ToString(out.SubscriptionArn)
	if !strings.HasPrefix(arn, "arn:") {
		return "", fmt.Errorf("subscribe %s to %s: the subscription is %q, not confirmed", queueArn, topicArn, arn)
	}
	return arn, nil
}

// Unsubscribe implements smoke.AWS.
func (a AWS) Unsubscribe(ctx context.Context, arn string) error {
	_, err := a.SNS.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(arn)})
	return deleted[*snstypes.NotFoundException](err, "unsubscribe %s", arn)
}
