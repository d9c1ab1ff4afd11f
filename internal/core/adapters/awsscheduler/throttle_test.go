package awsscheduler_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/internal/core/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

// failing is the whole SDK interface answering every call with err.
type failing struct{ err error }

func (f failing) CreateSchedule(context.Context, *scheduler.CreateScheduleInput, ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error) {
	return nil, f.err
}
func (f failing) UpdateSchedule(context.Context, *scheduler.UpdateScheduleInput, ...func(*scheduler.Options)) (*scheduler.UpdateScheduleOutput, error) {
	return nil, f.err
}
func (f failing) DeleteSchedule(context.Context, *scheduler.DeleteScheduleInput, ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error) {
	return nil, f.err
}
func (f failing) GetSchedule(context.Context, *scheduler.GetScheduleInput, ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error) {
	return nil, f.err
}
func (f failing) ListSchedules(context.Context, *scheduler.ListSchedulesInput, ...func(*scheduler.Options)) (*scheduler.ListSchedulesOutput, error) {
	return nil, f.err
}

// TestClientMapsThrottlesOntoTheCore: every call of the adapter
// that the scheduler throttles carries timer.ErrThrottled (what the
// core's paced caller retries); other errors do not.
func TestClientMapsThrottlesOntoTheCore(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sdk      error
		throttle bool
	}{
		{"typed throttle", &types.ThrottlingException{Message: aws.String("slow down")}, true},
		{"throttle by code", &smithy.GenericAPIError{Code: "TooManyRequestsException"}, true},
		{"validation", &types.ValidationException{Message: aws.String("bad")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := awsscheduler.New(failing{tc.sdk}, awsscheduler.Config{GroupName: "g", TargetArn: "arn:aws:lambda:us-east-1:123456789012:function:f",
				RoleArn: "arn:aws:iam::123456789012:role/r", DeadLetterArn: "arn:aws:sqs:us-east-1:123456789012:q", Schema: timertest.Schema})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			s := timer.Schedule{Name: "n", At: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
			_, getErr := c.Get(ctx, "n", time.Time{})
			_, listErr := c.List(ctx, timer.PageRequest{})
			for op, err := range map[string]error{"Arm": c.Arm(ctx, s), "Move": c.Move(ctx, s, time.Time{}),
				"Disarm": c.Disarm(ctx, "n", time.Time{}), "Get": getErr, "List": listErr} {
				if err == nil || errors.Is(err, timer.ErrThrottled) != tc.throttle {
					t.Errorf("%s = %v; want throttle %v", op, err, tc.throttle)
				}
			}
		})
	}
}
