// Package awssfn is the Step Functions timer: a timer.Timer whose
// schedule of an item is one execution of a Standard state machine that
// waits until the due time (Wait with TimestampPath $.at) and then
// invokes the firing function with the payload ($.payload).
//
// An execution is named from the item's key and due time
// (timerspec.ExecutionName), so Arm is idempotent and Move and Disarm stop
// it by name without listing. A closed name cannot be used again for 90
// days, so arming the same due time again starts a chain of restarts
// (timerspec.RestartName) that each call follows with DescribeExecution.
// The few executions left running are harmless: the claim skips them.
// See docs/decisions/stale-executions.md.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html
package awssfn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// API is the part of the Step Functions client the adapter uses.
type API interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, opts ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
	StopExecution(ctx context.Context, in *sfn.StopExecutionInput, opts ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error)
	DescribeExecution(ctx context.Context, in *sfn.DescribeExecutionInput, opts ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
}

// ListAPI is the call List adds to API. New takes an API; List works when
// that client also has ListExecutions (an *sfn.Client has), and is an
// error otherwise: the functions that only arm and disarm need no more.
type ListAPI interface {
	API
	ListExecutions(ctx context.Context, in *sfn.ListExecutionsInput, opts ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error)
}

var _ ListAPI = (*sfn.Client)(nil)

// refusal is an error no retry can change (a due time beyond
// timerspec.MaxHorizon stays beyond it: the horizon moves with the clock, but
// a retry comes minutes later, not months). Permanent tells the cancel
// worker to acknowledge the message instead of retrying it; errors.Is
// still finds the cause (timerspec.ErrBeyondHorizon).
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

// Client is a timer.Timer on one state machine.
type Client struct {
	api API
	cfg Config
}

var (
	_ timer.Timer  = (*Client)(nil)
	_ timer.Reader = (*Client)(nil)
)

// New checks cfg and returns a client.
func New(api API, cfg Config) (*Client, error) {
	if api == nil {
		return nil, errors.New("awssfn: the Step Functions API client is nil")
	}
	if cfg.StateMachineArn == "" {
		return nil, fmt.Errorf("awssfn: config StateMachineArn is empty: set %s to the state machine's ARN", envvars.StateMachineArn)
	}
	if cfg.Schema.PartitionKey == "" {
		return nil, fmt.Errorf("awssfn: config Schema is empty: set it to the item table's contract (%s)", envvars.ItemSchema)
	}
	if cfg.Now == nil {
		cfg.Now = clock.System{}.Now
	}
	return &Client{api: api, cfg: cfg}, nil
}

// Arm implements timer.Timer: start the execution named for s's
// due time, or, when that name is closed by a stop or a failure, the
// first open link of its restart chain (docs/decisions/stale-executions.md).
func (c *Client) Arm(ctx context.Context, s contract.Schedule) error {
	if err := timerspec.CheckHorizon(s.At, c.cfg.Now()); err != nil {
		return refusal{fmt.Errorf("awssfn: %s: %w", s.Name, err)}
	}
	input := timerspec.ExecutionInput(c.cfg.Schema, s)
	first := timerspec.ExecutionName(s.Name, s.At)
	name, prev := first, time.Time{}
	for i := 0; ; i++ {
		err := c.start(ctx, name, input)
		var exists *types.ExecutionAlreadyExists
		if !errors.As(err, &exists) {
			return err // started, the same running execution, or a failure
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
		if !closed(d.Status) {
			return nil // the same execution: waiting, or it already fired
		}
		// Stopped (a cancel) or failed, and the item is armed again for
		// the same due time: the next link of the chain.
		if i == timerspec.MaxRestarts {
			return refusal{chainError(first)}
		}
		if name, prev, err = nextLink(first, name, prev, d); err != nil {
			return err
		}
	}
}

// closed reports whether an execution of status st ended without firing
// (stopped, failed, timed out), so that its name is closed and the chain
// goes on to a restart. RUNNING, SUCCEEDED and PENDING_REDRIVE (a failed
// execution that a redrive may continue) end the chain.
func closed(st types.ExecutionStatus) bool {
	switch st {
	case types.ExecutionStatusRunning, types.ExecutionStatusSucceeded, types.ExecutionStatusPendingRedrive:
		return false
	}
	return true
}

// nextLink names the restart of the closed link called name (itself
// named after the second prev; zero for the chain's first), from the
// stopDate DescribeExecution returned for it (startDate when a service
// leaves stopDate out: it is as deterministic, only sooner).
func nextLink(first, name string, prev time.Time, d *sfn.DescribeExecutionOutput) (string, time.Time, error) {
	stopped := aws.ToTime(d.StopDate)
	if stopped.IsZero() {
		stopped = aws.ToTime(d.StartDate)
	}
	if stopped.IsZero() {
		return "", time.Time{}, fmt.Errorf("awssfn: execution %s is %s and DescribeExecution gave no stopDate: its restart cannot be named",
			name, d.Status)
	}
	t := timerspec.RestartSecond(prev, stopped)
	return timerspec.RestartName(first, t), t, nil
}

func chainError(first string) error {
	return fmt.Errorf("awssfn: execution %s: %w: it and its %d restarts are all closed "+
		"(the item was cancelled and armed again for the same due time %d times); "+
		"arm it for another due time, or let the reconciler's overdue sweep fire it",
		first, timerspec.ErrRestartChain, timerspec.MaxRestarts, timerspec.MaxRestarts+1)
}

// find follows the restart chain of the execution called first with
// DescribeExecution to its first link not closed: the one running, one
// that fired, or a name never started (d nil).
func (c *Client) find(ctx context.Context, first string) (name string, d *sfn.DescribeExecutionOutput, err error) {
	name, prev := first, time.Time{}
	for i := 0; ; i++ {
		d, err := c.api.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(c.executionArn(name))})
		var gone *types.ExecutionDoesNotExist
		switch {
		case errors.As(err, &gone):
			return name, nil, nil
		case err != nil:
			return name, nil, fmt.Errorf("awssfn: describe %s: %w", name, err)
		case !closed(d.Status):
			return name, d, nil
		case i == timerspec.MaxRestarts:
			return name, nil, chainError(first)
		}
		if name, prev, err = nextLink(first, name, prev, d); err != nil {
			return name, nil, err
		}
	}
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

// Move implements timer.Timer: stop the running execution of the
// due time from (unless it is zero or s's own), start s's.
// timer.ErrNotFound when none of from's chain runs.
func (c *Client) Move(ctx context.Context, s contract.Schedule, from time.Time) error {
	if err := timerspec.CheckHorizon(s.At, c.cfg.Now()); err != nil {
		return refusal{fmt.Errorf("awssfn: %s: %w", s.Name, err)}
	}
	if !from.IsZero() && !from.Equal(s.At) {
		if err := c.stop(ctx, timerspec.ExecutionName(s.Name, from)); err != nil {
			return err
		}
	}
	return c.Arm(ctx, s)
}

// Disarm implements timer.Timer: stop the running execution of the
// schedule called name at at (the execution named for at, or the restart
// of it that runs). timer.ErrNotFound when none runs, or at is
// zero: with no due time there is no name to stop, and any execution
// left is stale (docs/decisions/stale-executions.md).
func (c *Client) Disarm(ctx context.Context, name string, at time.Time) error {
	if at.IsZero() {
		return timer.ErrNotFound
	}
	return c.stop(ctx, timerspec.ExecutionName(name, at))
}

// stop stops the running link of the chain of the execution called
// first, by its ARN. None running (never started, fired, or every link
// stopped) is timer.ErrNotFound; a chain too long to follow is
// a refusal (Arm starts no link beyond it, so none runs there).
func (c *Client) stop(ctx context.Context, first string) error {
	name, d, err := c.find(ctx, first)
	switch {
	case errors.Is(err, timerspec.ErrRestartChain):
		return refusal{err}
	case err != nil:
		return err
	case d == nil || d.Status != types.ExecutionStatusRunning:
		return timer.ErrNotFound
	}
	_, err = c.api.StopExecution(ctx, &sfn.StopExecutionInput{
		ExecutionArn: aws.String(c.executionArn(name)), Cause: aws.String("unscheduled: the item was cancelled or moved"),
	})
	var gone *types.ExecutionDoesNotExist
	switch {
	case errors.As(err, &gone):
		return timer.ErrNotFound
	case err != nil:
		return fmt.Errorf("awssfn: stop %s: %w", name, err)
	}
	return nil
}

// executionArn is the ARN of the execution called name: the state
// machine's ARN with "stateMachine" replaced by "execution".
func (c *Client) executionArn(name string) string {
	return strings.Replace(c.cfg.StateMachineArn, ":stateMachine:", ":execution:", 1) + ":" + name
}

// Status is the status of the execution named for name and at, not
// following its restarts: RUNNING, SUCCEEDED (it fired), ABORTED (a
// cancel stopped it), FAILED or TIMED_OUT; timer.ErrNotFound when none
// was started. An operator's report reads it (unschedule why).
func (c *Client) Status(ctx context.Context, name string, at time.Time) (string, error) {
	exec := timerspec.ExecutionName(name, at)
	d, err := c.api.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(c.executionArn(exec))})
	var gone *types.ExecutionDoesNotExist
	switch {
	case errors.As(err, &gone):
		return "", fmt.Errorf("awssfn: status of %s: %w", exec, timer.ErrNotFound)
	case err != nil:
		return "", fmt.Errorf("awssfn: status of %s: %w", exec, err)
	}
	return string(d.Status), nil
}

// Get implements timer.Reader: the running execution of the due time
// at (the one named for at, or the restart of it that runs: Get follows
// the chain with DescribeExecution as Arm does), with the due time and
// payload of its input. timer.ErrNotFound when no link runs (none was
// started, it fired, or a cancel stopped it), or when at is zero: an
// execution is named by its due time, so without one there is no name to
// read (List gives the names and due times). A chain longer than
// timerspec.MaxRestarts is an error wrapping timerspec.ErrRestartChain.
// DescribeExecution is eventually consistent: an execution started a
// moment ago may not be found yet.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html
func (c *Client) Get(ctx context.Context, name string, at time.Time) (timer.Schedule, error) {
	if at.IsZero() {
		return timer.Schedule{}, fmt.Errorf("awssfn: get %s: %w: without its due time there is no execution name to read",
			name, timer.ErrNotFound)
	}
	exec, d, err := c.find(ctx, timerspec.ExecutionName(name, at))
	switch {
	case err != nil:
		return timer.Schedule{}, err
	case d == nil:
		return timer.Schedule{}, fmt.Errorf("awssfn: get %s: %w: no execution has that name", exec, timer.ErrNotFound)
	case d.Status != types.ExecutionStatusRunning:
		return timer.Schedule{}, fmt.Errorf("awssfn: get %s: %w: the execution is %s", exec, timer.ErrNotFound, d.Status)
	}
	var in timerspec.Input
	if err := json.Unmarshal([]byte(aws.ToString(d.Input)), &in); err != nil {
		return timer.Schedule{}, fmt.Errorf("awssfn: execution %s: input: %w", exec, err)
	}
	due, err := time.Parse(time.RFC3339, in.At)
	if err != nil {
		return timer.Schedule{}, fmt.Errorf("awssfn: execution %s: input at: %w", exec, err)
	}
	p, err := c.cfg.Schema.DecodePayload(in.Payload)
	if err != nil {
		return timer.Schedule{}, fmt.Errorf("awssfn: execution %s: input payload: %w", exec, err)
	}
	return timer.Schedule{Name: name, At: due.UTC(), Payload: p}, nil
}

// maxListResults is the most ListExecutions returns in one call.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_ListExecutions.html
const maxListResults = 1000

// List implements timer.Reader: one page of the state machine's RUNNING
// executions (ListExecutions with statusFilter RUNNING), one entry per
// execution, so an item with several running (a restart, or a stale one,
// docs/decisions/stale-executions.md) is listed once for each. Each entry
// has the schedule name and due time its execution name holds (a restart's is
// the due time of the execution it restarted), and no Payload: Get reads
// it. Executions whose names are not this schema's (another schema's
// prefix, a name hashed for its length) are skipped, so a page may be
// short or empty while more follow. The cursor is ListExecutions'
// nextToken. ListExecutions is eventually consistent (an execution
// started or stopped a moment ago may be listed as it was), lists the
// most recent first, and its tokens expire after 24 hours (InvalidToken).
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_ListExecutions.html
func (c *Client) List(ctx context.Context, page timer.PageRequest) (timer.Page, error) {
	limit := page.Limit
	switch {
	case limit <= 0:
		limit = timer.DefaultLimit
	case limit > maxListResults:
		limit = maxListResults
	}
	in := &sfn.ListExecutionsInput{
		StateMachineArn: aws.String(c.cfg.StateMachineArn),
		StatusFilter:    types.ExecutionStatusRunning,
		MaxResults:      int32(limit),
	}
	if page.Cursor != "" {
		in.NextToken = aws.String(page.Cursor)
	}
	l, ok := c.api.(ListAPI)
	if !ok {
		return timer.Page{}, errors.New("awssfn: list executions: the Step Functions client has no ListExecutions: pass an *sfn.Client")
	}
	out, err := l.ListExecutions(ctx, in)
	if err != nil {
		return timer.Page{}, fmt.Errorf("awssfn: list executions: %w", err)
	}
	p := timer.Page{Cursor: aws.ToString(out.NextToken)}
	for _, e := range out.Executions {
		if s, ok := c.parse(aws.ToString(e.Name)); ok {
			p.Schedules = append(p.Schedules, s)
		}
	}
	return p, nil
}

// parse reads the schedule name and due time from an execution's name:
// an ExecutionName, or a RestartName of one. ok is false for any other
// name, or a schedule name without one of the schema's prefixes.
func (c *Client) parse(exec string) (timer.Schedule, bool) {
	name, due, ok := timerspec.ParseExecutionName(exec)
	if !ok {
		name, due, _, ok = timerspec.ParseRestartName(exec)
	}
	s := c.cfg.Schema
	if !ok || !(strings.HasPrefix(name, s.ScheduleNamePrefix) || (s.ReminderNamePrefix != "" && strings.HasPrefix(name, s.ReminderNamePrefix))) {
		return timer.Schedule{}, false
	}
	return timer.Schedule{Name: name, At: due}, true
}
