// Package campaignscheduler is the EventBridge Scheduler adapter of the
// campaign.Scheduler port. It passes a campaign.ScheduleRequest as it is
// (at() in the campaign's zone, FlexibleTimeWindow OFF, ActionAfterCompletion
// DELETE, the task's ClientToken, the send function as target through the
// scheduler role, 2 retries, the dead-letter queue) and maps the
// scheduler's errors onto the port's: a throttle → campaign.ErrThrottled
// (provisioning backs off and retries it), ConflictException →
// campaign.ErrScheduleExists, ResourceNotFoundException →
// campaign.ErrScheduleNotFound. Build the SDK client WithoutSDKRetries:
// the core's back-off owns retries (a throttle is retried until done,
// other errors a bounded number of times), so one call is not retried
// twice over and the SDK's client-side retry quota never fails a call.
package campaignscheduler

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/campaign"
)

// API is the part of the EventBridge Scheduler client the adapter uses.
type API interface {
	CreateSchedule(ctx context.Context, in *scheduler.CreateScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error)
	GetSchedule(ctx context.Context, in *scheduler.GetScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error)
	DeleteSchedule(ctx context.Context, in *scheduler.DeleteScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error)
}

var _ API = (*scheduler.Client)(nil)

// Client is a campaign.Scheduler.
type Client struct{ api API }

var _ campaign.Scheduler = (*Client)(nil)

// New returns a Client.
func New(api API) (*Client, error) {
	if api == nil {
		return nil, errors.New("campaignscheduler: the scheduler API client is nil")
	}
	return &Client{api: api}, nil
}

// WithoutSDKRetries is a scheduler.Options function that makes every
// call a single try: scheduler.NewFromConfig(cfg, WithoutSDKRetries).
func WithoutSDKRetries(o *scheduler.Options) { o.Retryer = aws.NopRetryer{} }

// Input is the CreateSchedule call of r.
func Input(r campaign.ScheduleRequest) *scheduler.CreateScheduleInput {
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

// mapErr adds the port's error to the scheduler's.
func mapErr(err error) error {
	var conflict *types.ConflictException
	var nf *types.ResourceNotFoundException
	switch {
	case err == nil:
		return nil
	case awsscheduler.IsThrottle(err):
		return fmt.Errorf("%w (%w)", campaign.ErrThrottled, err)
	case errors.As(err, &conflict):
		return fmt.Errorf("%w (%w)", campaign.ErrScheduleExists, err)
	case errors.As(err, &nf):
		return fmt.Errorf("%w (%w)", campaign.ErrScheduleNotFound, err)
	}
	return err
}

// Create implements campaign.Scheduler.
func (c *Client) Create(ctx context.Context, r campaign.ScheduleRequest) error {
	if _, err := c.api.CreateSchedule(ctx, Input(r)); err != nil {
		return fmt.Errorf("create schedule %s: %w", r.Name, mapErr(err))
	}
	return nil
}

// Exists implements campaign.Scheduler with GetSchedule.
func (c *Client) Exists(ctx context.Context, group, name string) (bool, error) {
	_, err := c.api.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(name), GroupName: aws.String(group)})
	err = mapErr(err)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, campaign.ErrScheduleNotFound):
		return false, nil
	}
	return false, fmt.Errorf("get schedule %s: %w", name, err)
}

// Delete implements campaign.Scheduler.
func (c *Client) Delete(ctx context.Context, group, name string) error {
	if _, err := c.api.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String(name), GroupName: aws.String(group)}); err != nil {
		return fmt.Errorf("delete schedule %s: %w", name, mapErr(err))
	}
	return nil
}
