// Package awssfn is the Step Functions execution layer: a task.Scheduler
// whose "schedule" of an item is one execution of a Standard state machine
// that waits until the due time (Wait with TimestampPath $.at) and then
// invokes the expiry function with the payload ($.payload), the same
// payload the EventBridge Scheduler layer hands it.
//
//   - Create starts the execution named layers.ExecutionName(name, due).
//     StartExecution of a Standard state machine is idempotent: the same
//     name and input as a running execution succeeds without a second
//     one. ExecutionAlreadyExists with another input is ErrInputConflict.
//     A name whose execution ran is a success; one that a cancel stopped
//     (the item was armed again for the same due time) is restarted as
//     layers.RestartName, unless such a restart runs already.
//   - Update (a move) stops the item's other running executions and starts
//     the one for the new due time.
//   - Delete (a cancel) stops the item's running executions; none is
//     task.ErrScheduleNotFound, which the worker counts as success.
//   - Due times more than layers.MaxHorizon away are rejected
//     (layers.ErrBeyondHorizon), not chained: an execution lasts one year.
//     The error reports Permanent(): no retry changes it.
//
// Create does not list the item's other executions (see the cost below),
// so a create that races a move can leave a stale execution running
// beside the right one. It is harmless: it fires at its own due time and
// the claim skips it (the payload's due time is not the item's); the next
// move or cancel stops it. The simulation checks exactly this
// (internal/sim, FaultStaleExecution).
//
// Finding an item's running executions lists the state machine's RUNNING
// executions (1,000 a page) and keeps those whose name starts with
// layers.ExecutionPrefix(name): a move or cancel costs one ListExecutions
// per 1,000 armed items plus one StopExecution.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
package awssfn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/clock"
	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/lambdaenv"
	"github.com/unschedule/unschedule/internal/layers"
)

// API is the part of the Step Functions client the adapter uses.
type API interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, opts ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
	StopExecution(ctx context.Context, in *sfn.StopExecutionInput, opts ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error)
	ListExecutions(ctx context.Context, in *sfn.ListExecutionsInput, opts ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error)
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, opts ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
}

var _ API = (*sfn.Client)(nil)

// refusal is an error no retry can change (a due time beyond
// layers.MaxHorizon stays beyond it: the horizon moves with the clock, but
// a retry comes minutes later, not months). Permanent tells the cancel
// worker to acknowledge the message instead of retrying it; errors.Is
// still finds the cause (layers.ErrBeyondHorizon).
type refusal struct{ err error }

func (r refusal) Error() string { return r.err.Error() }
func (r refusal) Unwrap() error { return r.err }
func (refusal) Permanent() bool { return true }

// ErrInputConflict: an execution of that name exists with another input.
var ErrInputConflict = errors.New("execution exists with another input")

// Config is the state machine and the schema of its payloads.
type Config struct {
	StateMachineArn string
	Schema          contract.Schema
	// Now tells the time (the horizon check). Default: time.Now.
	Now func() time.Time
}

// ConfigFromEnv reads STATE_MACHINE_ARN and the schema.
func ConfigFromEnv(e *lambdaenv.Env) Config {
	return Config{StateMachineArn: e.Require(envvars.StateMachineArn), Schema: e.Schema()}
}

// Client is a task.Scheduler on one state machine.
type Client struct {
	api API
	cfg Config
}

var _ task.Scheduler = (*Client)(nil)

// New checks cfg and returns a client.
func New(api API, cfg Config) (*Client, error) {
	if api == nil {
		return nil, errors.New("awssfn: the Step Functions API client is nil")
	}
	if cfg.StateMachineArn == "" {
		return nil, fmt.Errorf("awssfn: config StateMachineArn is empty: set %s to the state machine's ARN", envvars.StateMachineArn)
	}
	if cfg.Schema.PartitionKey == "" {
		cfg.Schema = contract.Default()
	}
	if cfg.Now == nil {
		cfg.Now = clock.System{}.Now
	}
	return &Client{api: api, cfg: cfg}, nil
}

// Create implements task.Scheduler.
func (c *Client) Create(ctx context.Context, s task.Schedule) error {
	now := c.cfg.Now()
	if err := layers.CheckHorizon(s.At, now); err != nil {
		return refusal{fmt.Errorf("awssfn: %s: %w", s.Name, err)}
	}
	input := layers.ExecutionInput(c.cfg.Schema, s)
	name := layers.ExecutionName(s.Name, s.At)
	err := c.start(ctx, name, input)
	var exists *types.ExecutionAlreadyExists
	if !errors.As(err, &exists) {
		return err
	}
	d, derr := c.api.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(c.executionArn(name))})
	if derr != nil {
		return fmt.Errorf("awssfn: start %s: %w; describe: %w", name, err, derr)
	}
	if aws.ToString(d.Input) != input {
		return fmt.Errorf("awssfn: execution %s: %w: it was started with %s, this schedule is %s; "+
			"a schema change renamed payload attributes, or two items share a schedule name",
			name, ErrInputConflict, aws.ToString(d.Input), input)
	}
	switch d.Status {
	case types.ExecutionStatusRunning, types.ExecutionStatusSucceeded, types.ExecutionStatusPendingRedrive:
		return nil // the same execution: waiting, or it already fired
	}
	// Stopped (a cancel) or failed, and the item is armed again for the
	// same due time: a closed name is not reused for 90 days. Unless a
	// restart runs already, start one named after this second.
	running, err := c.running(ctx, s.Name)
	if err != nil {
		return err
	}
	for _, e := range running {
		if strings.HasPrefix(aws.ToString(e.Name), name+"-r") {
			return nil
		}
	}
	restart := layers.RestartName(name, now)
	if err := c.start(ctx, restart, input); err != nil && !errors.As(err, &exists) {
		return err
	}
	return nil
}

func (c *Client) start(ctx context.Context, name, input string) error {
	_, err := c.api.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(c.cfg.StateMachineArn), Name: aws.String(name), Input: aws.String(input),
	})
	var exists *types.ExecutionAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("awssfn: start %s: %w", name, err)
	}
	return err
}

// Update implements task.Scheduler: stop the item's other running
// executions, start the one for s. task.ErrScheduleNotFound when the item
// has none running.
func (c *Client) Update(ctx context.Context, s task.Schedule) error {
	running, err := c.running(ctx, s.Name)
	if err != nil {
		return err
	}
	if len(running) == 0 {
		return task.ErrScheduleNotFound
	}
	keep := layers.ExecutionName(s.Name, s.At)
	if err := c.stop(ctx, running, keep); err != nil {
		return err
	}
	return c.Create(ctx, s)
}

// Delete implements task.Scheduler: stop every running execution of the
// schedule; task.ErrScheduleNotFound when none runs.
func (c *Client) Delete(ctx context.Context, name string) error {
	running, err := c.running(ctx, name)
	if err != nil {
		return err
	}
	if len(running) == 0 {
		return task.ErrScheduleNotFound
	}
	return c.stop(ctx, running, "")
}

// stop stops the executions, except those named keep (or keep-rN). An
// execution that is gone or closed meanwhile counts as stopped.
func (c *Client) stop(ctx context.Context, execs []types.ExecutionListItem, keep string) error {
	for _, e := range execs {
		n := aws.ToString(e.Name)
		if keep != "" && (n == keep || strings.HasPrefix(n, keep+"-r")) {
			continue
		}
		_, err := c.api.StopExecution(ctx, &sfn.StopExecutionInput{
			ExecutionArn: e.ExecutionArn, Cause: aws.String("unscheduled: the item was cancelled or moved"),
		})
		var gone *types.ExecutionDoesNotExist
		if err != nil && !errors.As(err, &gone) {
			return fmt.Errorf("awssfn: stop %s: %w", n, err)
		}
	}
	return nil
}

// running lists the running executions of the schedule called name.
func (c *Client) running(ctx context.Context, name string) ([]types.ExecutionListItem, error) {
	prefix := layers.ExecutionPrefix(name)
	var out []types.ExecutionListItem
	in := &sfn.ListExecutionsInput{
		StateMachineArn: aws.String(c.cfg.StateMachineArn), StatusFilter: types.ExecutionStatusRunning, MaxResults: 1000,
	}
	for {
		page, err := c.api.ListExecutions(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("awssfn: list executions of %s: %w", name, err)
		}
		for _, e := range page.Executions {
			if strings.HasPrefix(aws.ToString(e.Name), prefix) {
				out = append(out, e)
			}
		}
		if page.NextToken == nil {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

// executionArn is the ARN of the execution called name: the state
// machine's ARN with "stateMachine" replaced by "execution".
func (c *Client) executionArn(name string) string {
	return strings.Replace(c.cfg.StateMachineArn, ":stateMachine:", ":execution:", 1) + ":" + name
}
