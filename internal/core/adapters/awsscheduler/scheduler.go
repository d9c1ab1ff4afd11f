// Package awsscheduler is the one EventBridge Scheduler adapter of the
// core. Client speaks the task ports: timer.Timer and
// timer.Reader over one schedule group, for items of any schema
// (the to-do app's tasks, campaign sends). It maps a throttle onto
// timer.ErrThrottled, which the core's paced caller
// (internal/core/timer/paced) backs off and retries.
//
// Every schedule of Client is a one-off at() expression in UTC, at the whole minute
// at or after the item's due time (ScheduleTime), that invokes one target
// (the firing function) with the task's payload, and deletes itself after
// it fires.
package awsscheduler

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// API is the part of the EventBridge Scheduler client Client uses.
type API interface {
	CreateSchedule(ctx context.Context, in *scheduler.CreateScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error)
	GetSchedule(ctx context.Context, in *scheduler.GetScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error)
	DeleteSchedule(ctx context.Context, in *scheduler.DeleteScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error)
	UpdateSchedule(ctx context.Context, in *scheduler.UpdateScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.UpdateScheduleOutput, error)
	ListSchedules(ctx context.Context, in *scheduler.ListSchedulesInput, opts ...func(*scheduler.Options)) (*scheduler.ListSchedulesOutput, error)
}

var _ API = (*scheduler.Client)(nil)

// Scheduler limits on a target's retry policy.
const (
	DefaultMaxRetryAttempts = 3
	MaxRetryAttemptsLimit   = 185
	DefaultMaxEventAgeSec   = 86400
	MinEventAgeSec          = 60
	MaxEventAgeSecLimit     = 86400
	// maxListResults is the most ListSchedules returns in one call.
	maxListResults = 100
)

// ScheduleTime is where a one-off schedule for a due time goes: the due
// time (to the second, as the firing core reads it) rounded up to the next
// whole minute; a due time on a whole minute stays. The scheduler
// invokes "with 60 second precision", anywhere in the schedule's minute,
// so a schedule placed mid-minute could fire before its item is due; on
// the whole minute it fires at or after it, under 2 minutes late. Every
// place that writes or compares a Scheduler one-off time for a due time
// uses this function. See docs/decisions/scheduler-whole-minute.md.
// https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html
func ScheduleTime(due time.Time) time.Time {
	t := due.UTC().Truncate(time.Second)
	if m := t.Truncate(time.Minute); !m.Equal(t) {
		return m.Add(time.Minute)
	}
	return t
}

// ServedTime is the due time a schedule placed at placed, with payload p,
// serves, as Get reports it in Schedule.At: the payload's time (its
// reminder time for a reminder's) when the schedule is where ScheduleTime
// places that time. Otherwise it is the earliest moment the schedule may
// fire (the start of its minute), which is not the due time the payload
// names, so a caller comparing it with the item's due time (the
// reconciler) finds the schedule misplaced and moves it; one made at the
// exact second, before ScheduleTime, is moved so.
func ServedTime(placed time.Time, p contract.Payload) time.Time {
	at := p.Due
	if p.IsReminder() {
		at = p.Remind
	}
	if !at.IsZero() && ScheduleTime(at).Equal(placed.UTC()) {
		return at.UTC().Truncate(time.Second)
	}
	return placed.UTC().Truncate(time.Minute)
}

// Config is where schedules go and what they invoke.
type Config struct {
	// GroupName is the schedule group that holds every task schedule.
	GroupName string
	// TargetArn is the function a schedule invokes (the firing function).
	TargetArn string
	// RoleArn is the role the scheduler assumes to invoke the target.
	RoleArn string
	// DeadLetterArn is the SQS queue that receives invocations that
	// failed every retry.
	DeadLetterArn string
	// MaxRetryAttempts bounds retries of a failed invocation.
	// Default: 3 (when 0).
	MaxRetryAttempts int32
	// MaxEventAgeSec bounds how long a failed invocation is retried.
	// Default: 86400, one day (when 0).
	MaxEventAgeSec int32
	// Schema renders and reads each schedule's input (the payload): the
	// item table's contract (contract.ParseEnv of UNSCHEDULE_ITEM_SCHEMA).
	// Required.
	Schema contract.Schema
}

// Client is a timer.Timer and timer.Reader on one schedule
// group.
type Client struct {
	api API
	cfg Config
}

var (
	_ timer.Timer  = (*Client)(nil)
	_ timer.Reader = (*Client)(nil)
)

// New checks cfg, fills its defaults and returns a client.
func New(api API, cfg Config) (*Client, error) {
	if api == nil {
		return nil, errors.New("awsscheduler: the scheduler API client is nil")
	}
	if cfg.MaxRetryAttempts == 0 {
		cfg.MaxRetryAttempts = DefaultMaxRetryAttempts
	}
	if cfg.MaxEventAgeSec == 0 {
		cfg.MaxEventAgeSec = DefaultMaxEventAgeSec
	}
	var errs []error
	for _, f := range []struct{ name, value, want string }{
		{"GroupName", cfg.GroupName, "the schedule group's name"},
		{"TargetArn", cfg.TargetArn, "the expiry function's ARN"},
		{"RoleArn", cfg.RoleArn, "the ARN of the role the scheduler assumes"},
		{"DeadLetterArn", cfg.DeadLetterArn, "the dead-letter queue's ARN"},
		{"Schema.PartitionKey", cfg.Schema.PartitionKey, "the item table's contract (" + envvars.ItemSchema + ")"},
	} {
		if f.value == "" {
			errs = append(errs, fmt.Errorf("awsscheduler: config %s is empty: set it to %s", f.name, f.want))
		}
	}
	if cfg.MaxRetryAttempts < 0 || cfg.MaxRetryAttempts > MaxRetryAttemptsLimit {
		errs = append(errs, fmt.Errorf("awsscheduler: config MaxRetryAttempts must be between 0 and %d inclusive (given %d)",
			MaxRetryAttemptsLimit, cfg.MaxRetryAttempts))
	}
	if cfg.MaxEventAgeSec < MinEventAgeSec || cfg.MaxEventAgeSec > MaxEventAgeSecLimit {
		errs = append(errs, fmt.Errorf("awsscheduler: config MaxEventAgeSec must be between %d and %d inclusive (given %d)",
			MinEventAgeSec, MaxEventAgeSecLimit, cfg.MaxEventAgeSec))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Client{api: api, cfg: cfg}, nil
}

// target is the invocation of the firing function with s's payload.
func (c *Client) target(s contract.Schedule) *types.Target {
	return &types.Target{
		Arn:     aws.String(c.cfg.TargetArn),
		RoleArn: aws.String(c.cfg.RoleArn),
		Input:   aws.String(c.cfg.Schema.EncodePayload(s.Payload)),
		RetryPolicy: &types.RetryPolicy{
			MaximumRetryAttempts:     aws.Int32(c.cfg.MaxRetryAttempts),
			MaximumEventAgeInSeconds: aws.Int32(c.cfg.MaxEventAgeSec),
		},
		DeadLetterConfig: &types.DeadLetterConfig{Arn: aws.String(c.cfg.DeadLetterArn)},
	}
}

// Arm implements timer.Timer. The client token makes a retried
// create a success; another schedule of the same name gives
// timer.ErrExists.
func (c *Client) Arm(ctx context.Context, s contract.Schedule) error {
	in := &scheduler.CreateScheduleInput{
		Name:                       aws.String(s.Name),
		GroupName:                  aws.String(c.cfg.GroupName),
		ScheduleExpression:         aws.String(AtExpression(ScheduleTime(s.At))),
		ScheduleExpressionTimezone: aws.String("UTC"),
		FlexibleTimeWindow:         &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		ActionAfterCompletion:      types.ActionAfterCompletionDelete,
		State:                      types.ScheduleStateEnabled,
		Target:                     c.target(s),
	}
	if s.ClientToken != "" {
		in.ClientToken = aws.String(s.ClientToken)
	}
	_, err := c.api.CreateSchedule(ctx, in)
	var conflict *types.ConflictException
	if errors.As(err, &conflict) {
		return fmt.Errorf("create schedule %s: %w (%w)", s.Name, timer.ErrExists, err)
	}
	if err != nil {
		return fmt.Errorf("create schedule %s: %w", s.Name, notFound(err))
	}
	return nil
}

// Move implements timer.Timer. UpdateSchedule replaces the whole
// definition, so it sends all of it again. It leaves the client token to
// the SDK: replacing a definition is idempotent by itself.
func (c *Client) Move(ctx context.Context, s contract.Schedule, _ time.Time) error {
	_, err := c.api.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{
		Name:                       aws.String(s.Name),
		GroupName:                  aws.String(c.cfg.GroupName),
		ScheduleExpression:         aws.String(AtExpression(ScheduleTime(s.At))),
		ScheduleExpressionTimezone: aws.String("UTC"),
		FlexibleTimeWindow:         &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		ActionAfterCompletion:      types.ActionAfterCompletionDelete,
		State:                      types.ScheduleStateEnabled,
		Target:                     c.target(s),
	})
	if err != nil {
		return fmt.Errorf("update schedule %s: %w", s.Name, notFound(err))
	}
	return nil
}

// Disarm implements timer.Timer.
func (c *Client) Disarm(ctx context.Context, name string, _ time.Time) error {
	_, err := c.api.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{
		Name: aws.String(name), GroupName: aws.String(c.cfg.GroupName),
	})
	if err != nil {
		return fmt.Errorf("delete schedule %s: %w", name, notFound(err))
	}
	return nil
}

// Get implements timer.Reader. At is the due time the schedule
// serves (ServedTime), in the terms Arm was given, not its expression.
// The scheduler does not return a schedule's client token, so ClientToken
// is "".
func (c *Client) Get(ctx context.Context, name string, _ time.Time) (contract.Schedule, error) {
	out, err := c.api.GetSchedule(ctx, &scheduler.GetScheduleInput{
		Name: aws.String(name), GroupName: aws.String(c.cfg.GroupName),
	})
	if err != nil {
		return contract.Schedule{}, fmt.Errorf("get schedule %s: %w", name, notFound(err))
	}
	at, err := ParseAtExpression(aws.ToString(out.ScheduleExpression))
	if err != nil {
		return contract.Schedule{}, fmt.Errorf("get schedule %s: %w", name, err)
	}
	if out.Target == nil || out.Target.Input == nil {
		return contract.Schedule{}, fmt.Errorf("get schedule %s: it has no target input", name)
	}
	p, err := c.cfg.Schema.DecodePayload([]byte(*out.Target.Input))
	if err != nil {
		return contract.Schedule{}, fmt.Errorf("get schedule %s: target input: %w", name, err)
	}
	return contract.Schedule{Name: aws.ToString(out.Name), At: ServedTime(at, p), Payload: p}, nil
}

// List implements timer.Reader. ListSchedules returns summaries
// only, so each Schedule has only its Name set: a caller that needs At or
// Payload calls Get. The cursor is the scheduler's NextToken.
func (c *Client) List(ctx context.Context, page timer.PageRequest) (timer.Page, error) {
	limit := page.Limit
	switch {
	case limit <= 0:
		limit = timer.DefaultLimit
	case limit > maxListResults:
		limit = maxListResults
	}
	in := &scheduler.ListSchedulesInput{
		GroupName:  aws.String(c.cfg.GroupName),
		NamePrefix: aws.String(c.cfg.Schema.ScheduleNamePrefix),
		MaxResults: aws.Int32(int32(limit)),
	}
	if page.Cursor != "" {
		in.NextToken = aws.String(page.Cursor)
	}
	out, err := c.api.ListSchedules(ctx, in)
	if err != nil {
		return timer.Page{}, fmt.Errorf("list schedules: %w", notFound(err))
	}
	p := timer.Page{Cursor: aws.ToString(out.NextToken)}
	for _, s := range out.Schedules {
		p.Schedules = append(p.Schedules, contract.Schedule{Name: aws.ToString(s.Name)})
	}
	return p, nil
}

// notFound adds timer.ErrNotFound to a ResourceNotFoundException
// and timer.ErrThrottled to a throttle (the core's paced caller retries
// it), and returns any other error as it is.
func notFound(err error) error {
	var nf *types.ResourceNotFoundException
	switch {
	case errors.As(err, &nf):
		return fmt.Errorf("%w (%w)", timer.ErrNotFound, err)
	case IsThrottle(err):
		return fmt.Errorf("%w (%w)", timer.ErrThrottled, err)
	}
	return err
}

// IsThrottle reports whether err is the scheduler asking to slow down: a
// caller may retry it later.
func IsThrottle(err error) bool {
	var th *types.ThrottlingException
	if errors.As(err, &th) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ThrottlingException", "TooManyRequestsException":
			return true
		}
	}
	return false
}

// AtExpression is the scheduler expression for a one-off schedule at t.
func AtExpression(t time.Time) string {
	return "at(" + t.UTC().Format("2006-01-02T15:04:05") + ")"
}

// ParseAtExpression inverts AtExpression (the expression is in UTC).
func ParseAtExpression(expr string) (time.Time, error) {
	m := atRE().FindStringSubmatch(expr)
	if m == nil {
		return time.Time{}, fmt.Errorf("not a one-off expression: %q", expr)
	}
	t, err := time.Parse("2006-01-02T15:04:05", m[1])
	if err != nil {
		return time.Time{}, fmt.Errorf("parse %q: %w", expr, err)
	}
	return t.UTC(), nil
}

// atRE is compiled on first use, not at package init: every function
// that links the task package would pay its compile in its cold init
// (about 100 allocations), and only the reconcilers parse expressions.
var atRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$`)
})
