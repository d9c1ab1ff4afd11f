// Package client is the future-events client an app's function uses:
// Schedule and Cancel on the construct's state machine, through the Step
// Functions API (package futureevents holds the SDK-free rules it
// applies: names, input, horizon).
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/unschedule/unschedule/futureevents"
)

// API is the part of the Step Functions client that Client uses.
type API interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, opts ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
	StopExecution(ctx context.Context, in *sfn.StopExecutionInput, opts ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error)
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, opts ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
}

var _ API = (*sfn.Client)(nil)

// Client schedules and cancels future events on one state machine.
type Client struct {
	api             API
	stateMachineArn string
	now             func() time.Time
}

// New returns a client of the state machine stateMachineArn.
func New(api API, stateMachineArn string) (*Client, error) {
	if api == nil {
		return nil, errors.New("futureevents: the Step Functions client is nil")
	}
	if _, err := futureevents.ExecutionArn(stateMachineArn, "x"); err != nil {
		return nil, fmt.Errorf("futureevents: set %s to the construct's state machine ARN: %w", futureevents.EnvStateMachineArn, err)
	}
	return &Client{api: api, stateMachineArn: stateMachineArn, now: time.Now}, nil
}

// FromEnv is New with the ARN from futureevents.EnvStateMachineArn.
func FromEnv(api API) (*Client, error) { return New(api, os.Getenv(futureevents.EnvStateMachineArn)) }

// WithClock returns a copy of c that reads the time from now (tests).
func (c *Client) WithClock(now func() time.Time) *Client {
	cp := *c
	cp.now = now
	return &cp
}

// Schedule starts execution name, which invokes target (a function
// registered with the construct) with payload (JSON; empty is {}) at at.
// Calling it again with the same name and arguments is no duplicate: it
// returns the existing execution's ARN. The same name with other
// arguments is futureevents.ErrNameConflict; a name whose execution was cancelled or
// failed is futureevents.ErrNameUsed. A moment beyond futureevents.MaxHorizon is futureevents.ErrInvalid.
func (c *Client) Schedule(ctx context.Context, name string, at time.Time, target string, payload []byte) (string, error) {
	if !futureevents.ValidName(name) {
		return "", fmt.Errorf("%w: execution name %q: use 1 to 80 characters of 0-9, A-Z, a-z, - and _ (futureevents.Name builds one from any parts)", futureevents.ErrInvalid, name)
	}
	in, err := futureevents.NewInput(c.now(), at, target, payload)
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(in)
	if err != nil {
		return "", fmt.Errorf("futureevents: encode input: %w", err)
	}
	out, err := c.api.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(c.stateMachineArn), Name: aws.String(name), Input: aws.String(string(body)),
	})
	if err == nil {
		return aws.ToString(out.ExecutionArn), nil
	}
	var exists *types.ExecutionAlreadyExists
	if !errors.As(err, &exists) {
		return "", fmt.Errorf("futureevents: start execution %s: %w", name, err)
	}
	// A running execution with this name and input is answered with
	// success by StartExecution itself; a closed one, or another input,
	// with ExecutionAlreadyExists: tell them apart.
	// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
	arn, _ := futureevents.ExecutionArn(c.stateMachineArn, name)
	d, derr := c.api.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if derr != nil {
		return "", fmt.Errorf("futureevents: execution %s exists; describe it: %w", name, derr)
	}
	if !futureevents.SameInput(aws.ToString(d.Input), string(body)) {
		return "", fmt.Errorf("%w: %s (status %s): pick another name, or Cancel it and schedule under a new name", futureevents.ErrNameConflict, name, d.Status)
	}
	switch d.Status {
	case types.ExecutionStatusRunning, types.ExecutionStatusSucceeded, types.ExecutionStatusPendingRedrive:
		return arn, nil
	default:
		return "", fmt.Errorf("%w: %s ended %s; Step Functions keeps an execution's name for 90 days: schedule under a new name", futureevents.ErrNameUsed, name, d.Status)
	}
}

// Cancel stops execution name. An execution that does not exist (never
// scheduled, or already gone) is success; so is one already closed.
func (c *Client) Cancel(ctx context.Context, name string) error {
	if !futureevents.ValidName(name) {
		return fmt.Errorf("%w: execution name %q", futureevents.ErrInvalid, name)
	}
	arn, _ := futureevents.ExecutionArn(c.stateMachineArn, name)
	_, err := c.api.StopExecution(ctx, &sfn.StopExecutionInput{
		ExecutionArn: aws.String(arn), Cause: aws.String("cancelled by the futureevents client"),
	})
	var missing *types.ExecutionDoesNotExist
	if err == nil || errors.As(err, &missing) {
		return nil
	}
	return fmt.Errorf("futureevents: stop execution %s: %w", name, err)
}
