package awsscheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/domain/timer"
)

// RequestAPI is the part of the EventBridge Scheduler client Requests
// uses.
type RequestAPI interface {
	CreateSchedule(ctx context.Context, in *scheduler.CreateScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error)
	GetSchedule(ctx context.Context, in *scheduler.GetScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error)
	DeleteSchedule(ctx context.Context, in *scheduler.DeleteScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error)
}

// Requests is the adapter of an adopter that builds each schedule itself
// (campaign.Scheduler): it passes a campaign.ScheduleRequest as it is
// (at() in the request's local time and ScheduleExpressionTimezone,
// FlexibleTimeWindow OFF, ActionAfterCompletion DELETE, the request's
// ClientToken, its target, role, retries and dead-letter queue) and maps
// the scheduler's errors onto the port's: a throttle → campaign.ErrThrottled
// and timer.ErrThrottled (the core's paced caller backs off and retries
// it), ConflictException → campaign.ErrScheduleExists,
// ResourceNotFoundException → campaign.ErrScheduleNotFound (which every
// caller of Delete takes as done). Build the SDK client
// WithoutSDKRetries: the paced caller owns retries, so one call is not
// retried twice over and the SDK's client-side retry quota never fails a
// call.
type Requests struct{ api RequestAPI }

var _ campaign.Scheduler = (*Requests)(nil)

// NewRequests returns a Requests.
func NewRequests(api RequestAPI) (*Requests, error) {
	if api == nil {
		return nil, errors.New("awsscheduler: the scheduler API client is nil")
	}
	return &Requests{api: api}, nil
}

// WithoutSDKRetries is a scheduler.Options function that makes every
// call a single try: scheduler.NewFromConfig(cfg, WithoutSDKRetries).
func WithoutSDKRetries(o *scheduler.Options) { o.Retryer = aws.NopRetryer{} }

// RequestInput is the CreateSchedule call of r.
func RequestInput(r campaign.ScheduleRequest) *scheduler.CreateScheduleInput {
	in := &scheduler.CreateScheduleInput{
		Name:                       aws.String(r.Name),
		GroupName:                  aws.String(r.GroupName),
		ScheduleExpression:         aws.String(r.Expression),
		ScheduleExpressionTimezone: aws.String(r.Timezone),
		FlexibleTimeWindow:         &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowMode(r.FlexibleTimeWindowMode)},
		ActionAfterCompletion:      types.ActionAfterCompletion(r.ActionAfterCompletion),
		State:                      types.ScheduleStateEnabled,
		Target: &types.Target{
			Arn:              aws.String(r.TargetArn),
			RoleArn:          aws.String(r.RoleArn),
			Input:            aws.String(r.Input),
			RetryPolicy:      &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(int32(r.MaximumRetryAttempts))},
			DeadLetterConfig: &types.DeadLetterConfig{Arn: aws.String(r.DeadLetterArn)},
		},
	}
	if r.ClientToken != "" {
		in.ClientToken = aws.String(r.ClientToken)
	}
	return in
}

// requestErr adds the port's error to the scheduler's.
func requestErr(err error) error {
	var conflict *types.ConflictException
	var nf *types.ResourceNotFoundException
	switch {
	case err == nil:
		return nil
	case IsThrottle(err):
		return fmt.Errorf("%w: %w (%w)", campaign.ErrThrottled, timer.ErrThrottled, err)
	case errors.As(err, &conflict):
		return fmt.Errorf("%w (%w)", campaign.ErrScheduleExists, err)
	case errors.As(err, &nf):
		return fmt.Errorf("%w (%w)", campaign.ErrScheduleNotFound, err)
	}
	return err
}

// Create implements campaign.Scheduler.
func (c *Requests) Create(ctx context.Context, r campaign.ScheduleRequest) error {
	if _, err := c.api.CreateSchedule(ctx, RequestInput(r)); err != nil {
		return fmt.Errorf("create schedule %s: %w", r.Name, requestErr(err))
	}
	return nil
}

// Exists implements campaign.Scheduler with GetSchedule.
func (c *Requests) Exists(ctx context.Context, group, name string) (bool, error) {
	_, err := c.api.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(name), GroupName: aws.String(group)})
	err = requestErr(err)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, campaign.ErrScheduleNotFound):
		return false, nil
	}
	return false, fmt.Errorf("get schedule %s: %w", name, err)
}

// Delete implements campaign.Scheduler. A schedule already gone (deleted
// after it fired, ActionAfterCompletion DELETE) is
// campaign.ErrScheduleNotFound, which callers take as done.
func (c *Requests) Delete(ctx context.Context, group, name string) error {
	if _, err := c.api.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String(name), GroupName: aws.String(group)}); err != nil {
		return fmt.Errorf("delete schedule %s: %w", name, requestErr(err))
	}
	return nil
}
