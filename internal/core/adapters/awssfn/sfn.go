// Package awssfn is the Step Functions timer: a task.Scheduler
// whose "schedule" of an item is one execution of a Standard state machine
// that waits until the due time (Wait with TimestampPath $.at) and then
// invokes the expiry function with the payload ($.payload), the same
// payload the EventBridge Scheduler timer hands it.
//
//   - Create starts the execution named timerspec.ExecutionName(name, due).
//     StartExecution of a Standard state machine is idempotent: the same
//     name and input as a running execution succeeds without a second
//     one. ExecutionAlreadyExists with another input is ErrInputConflict.
//     A name whose execution ran is a success; one that a cancel stopped
//     (the item was armed again for the same due time: a closed name
//     cannot be used again for 90 days) is restarted as
//     timerspec.RestartName(name, now).
//   - Update (a move from the due time from) stops the execution named
//     for from, one StopExecution by its ARN, and starts the one for the
//     new due time; task.ErrScheduleNotFound when no execution has that
//     name (the worker then creates). A from of zero (unknown) or equal
//     to the new due time stops nothing.
//   - Delete (a cancel of the item armed for at) is one StopExecution of
//     the execution named for at; task.ErrScheduleNotFound when none has
//     that name, or at is zero (unknown), which the worker counts as
//     success.
//   - Due times more than timerspec.MaxHorizon away are rejected
//     (timerspec.ErrBeyondHorizon), not chained: an execution lasts one year.
//     The error reports Permanent(): no retry changes it.
//
// So a cancel or a move costs one StopExecution, whatever the number of
// running executions: the name, and with it the ARN (the state machine's
// ARN with "stateMachine" replaced by "execution", then ":" and the name),
// comes from the item's key and the due time it was armed for, which the
// cancellation message carries from the record's old image. Only the
// reconciler lists executions (List, a timer.Reader); Get reads one by
// the same ARN.
//
// A few executions can be left running; each is harmless because the
// claim skips it (docs/decisions/stale-executions.md).
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
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
	"github.com/unschedule/unschedule/internal/core/tableschema"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/todo/task"
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

// Client is a task.Scheduler on one state machine.
type Client struct {
	api API
	cfg Config
}

var (
	_ task.Scheduler = (*Client)(nil)
	_ timer.Reader   = (*Client)(nil)
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
		cfg.Schema = tableschema.Todo()
	}
	if cfg.Now == nil {
		cfg.Now = clock.System{}.Now
	}
	return &Client{api: api, cfg: cfg}, nil
}

// Create implements task.Scheduler.
func (c *Client) Create(ctx context.Context, s task.Schedule) error {
	now := c.cfg.Now()
	if err := timerspec.CheckHorizon(s.At, now); err != nil {
		return refusal{fmt.Errorf("awssfn: %s: %w", s.Name, err)}
	}
	input := timerspec.ExecutionInput(c.cfg.Schema, s)
	name := timerspec.ExecutionName(s.Name, s.At)
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
	// same due time: a closed name is not used again for 90 days. Start a
	// restart named after this second (retries within it share it). One
	// that an earlier re-arm started may run too: the claim lets one of
	// them fire.
	restart := timerspec.RestartName(name, now)
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

// Update implements task.Scheduler: stop the execution of the due time
// from (unless it is zero or s's own), start s's. task.ErrScheduleNotFound
// when no execution has from's name.
func (c *Client) Update(ctx context.Context, s task.Schedule, from time.Time) error {
	if err := timerspec.CheckHorizon(s.At, c.cfg.Now()); err != nil {
		return refusal{fmt.Errorf("awssfn: %s: %w", s.Name, err)}
	}
	if !from.IsZero() && !from.Equal(s.At) {
		if err := c.stop(ctx, timerspec.ExecutionName(s.Name, from)); err != nil {
			return err
		}
	}
	return c.Create(ctx, s)
}

// Delete implements task.Scheduler: stop the execution of the schedule
// called name at at. task.ErrScheduleNotFound when none has that name, or
// at is zero: with no due time there is no name to stop, and any
// execution left is stale (see the package comment).
func (c *Client) Delete(ctx context.Context, name string, at time.Time) error {
	if at.IsZero() {
		return task.ErrScheduleNotFound
	}
	return c.stop(ctx, timerspec.ExecutionName(name, at))
}

// stop stops the execution called name by its ARN. One that does not
// exist is task.ErrScheduleNotFound; one that is closed already (it
// fired, or was stopped) runs no more either way.
func (c *Client) stop(ctx context.Context, name string) error {
	_, err := c.api.StopExecution(ctx, &sfn.StopExecutionInput{
		ExecutionArn: aws.String(c.executionArn(name)), Cause: aws.String("unscheduled: the item was cancelled or moved"),
	})
	var gone *types.ExecutionDoesNotExist
	switch {
	case errors.As(err, &gone):
		return task.ErrScheduleNotFound
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

// Get implements timer.Reader: the running execution named for the due
// time at (DescribeExecution by its ARN), with the due time and payload
// of its input. timer.ErrNotFound when no execution has that name, when
// it is not RUNNING (it fired, failed or was stopped: it will not fire),
// or when at is zero: an execution is named by its due time, so without
// one there is no name to read (List gives the names and due times).
// DescribeExecution is eventually consistent: an execution started a
// moment ago may not be found yet.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_DescribeExecution.html
func (c *Client) Get(ctx context.Context, name string, at time.Time) (timer.Schedule, error) {
	if at.IsZero() {
		return timer.Schedule{}, fmt.Errorf("awssfn: get %s: %w: without its due time there is no execution name to read",
			name, timer.ErrNotFound)
	}
	exec := timerspec.ExecutionName(name, at)
	d, err := c.api.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(c.executionArn(exec))})
	var gone *types.ExecutionDoesNotExist
	switch {
	case errors.As(err, &gone):
		return timer.Schedule{}, fmt.Errorf("awssfn: get %s: %w (%w)", exec, timer.ErrNotFound, err)
	case err != nil:
		return timer.Schedule{}, fmt.Errorf("awssfn: describe %s: %w", exec, err)
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
// execution, so an item with several running (a restart, or a stale one:
// see the package comment) is listed once for each. Each entry has the
// schedule name and due time its execution name holds (a restart's is
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
		limit = task.DefaultPageSize
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
