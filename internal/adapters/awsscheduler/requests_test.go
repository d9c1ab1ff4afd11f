package awsscheduler_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/internal/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/domain/timer"
	"github.com/unschedule/unschedule/internal/testenv"
)

// fake is the SDK interface returning err, recording the inputs.
type fake struct {
	err     error
	creates []*scheduler.CreateScheduleInput
}

func (f *fake) CreateSchedule(_ context.Context, in *scheduler.CreateScheduleInput, _ ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error) {
	f.creates = append(f.creates, in)
	return &scheduler.CreateScheduleOutput{}, f.err
}
func (f *fake) GetSchedule(context.Context, *scheduler.GetScheduleInput, ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error) {
	return &scheduler.GetScheduleOutput{}, f.err
}
func (f *fake) DeleteSchedule(context.Context, *scheduler.DeleteScheduleInput, ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error) {
	return &scheduler.DeleteScheduleOutput{}, f.err
}

var campaignTarget = campaign.Target{GroupName: "campaigns", FunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:send",
	RoleArn: "arn:aws:iam::123456789012:role/sched", DeadLetterArn: "arn:aws:sqs:us-east-1:123456789012:dlq"}

func sendTask() campaign.SendTask {
	return campaign.SendTask{CampaignID: "c1", ID: "c1-00007", Local: "2026-06-01T10:15:00", TimeZone: "Europe/Berlin",
		SchedulerRequestToken: "5f0c2c1e-4a7b-4d2e-9b61-3f1f1e0c7a55", State: campaign.Pending}
}

func TestRequestsCreateSendsTheRequestAsIs(t *testing.T) {
	f := &fake{}
	c, _ := awsscheduler.NewRequests(f)
	if err := c.Create(context.Background(), campaign.ScheduleFor(sendTask(), campaignTarget)); err != nil {
		t.Fatal(err)
	}
	want := &scheduler.CreateScheduleInput{
		Name: aws.String("camp-c1-00007"), GroupName: aws.String("campaigns"),
		ScheduleExpression: aws.String("at(2026-06-01T10:15:00)"), ScheduleExpressionTimezone: aws.String("Europe/Berlin"),
		FlexibleTimeWindow:    &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		ActionAfterCompletion: types.ActionAfterCompletionDelete, State: types.ScheduleStateEnabled,
		ClientToken: aws.String("5f0c2c1e-4a7b-4d2e-9b61-3f1f1e0c7a55"),
		Target: &types.Target{Arn: aws.String(campaignTarget.FunctionArn), RoleArn: aws.String(campaignTarget.RoleArn),
			Input:            aws.String(`{"campaignId":"c1","taskId":"c1-00007"}`),
			RetryPolicy:      &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(2)},
			DeadLetterConfig: &types.DeadLetterConfig{Arn: aws.String(campaignTarget.DeadLetterArn)}},
	}
	if len(f.creates) != 1 || !reflect.DeepEqual(f.creates[0], want) {
		t.Fatalf("CreateSchedule input\n got %+v\nwant %+v", f.creates, want)
	}
}

func TestRequestsErrorsMapOntoThePort(t *testing.T) {
	generic := &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}
	cases := []struct {
		name      string
		sdk       error
		create    error // what Create and Delete wrap
		exists    bool
		existsErr bool
	}{
		{"typed throttle", &types.ThrottlingException{Message: aws.String("slow down")}, campaign.ErrThrottled, false, true},
		{"throttle by code", generic, campaign.ErrThrottled, false, true},
		{"conflict", &types.ConflictException{Message: aws.String("exists")}, campaign.ErrScheduleExists, false, true},
		{"not found", &types.ResourceNotFoundException{Message: aws.String("gone")}, campaign.ErrScheduleNotFound, false, false},
		{"anything else", errors.New("boom"), nil, false, true},
		{"success", nil, nil, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := awsscheduler.NewRequests(&fake{err: tc.sdk})
			ctx := context.Background()
			err := c.Create(ctx, campaign.ScheduleFor(sendTask(), campaignTarget))
			if (tc.sdk == nil) != (err == nil) || (tc.create != nil && !errors.Is(err, tc.create)) {
				t.Errorf("Create = %v, want %v", err, tc.create)
			}
			if errors.Is(tc.create, campaign.ErrThrottled) && !errors.Is(err, timer.ErrThrottled) {
				t.Errorf("Create = %v: a throttle lacks timer.ErrThrottled, which the core's paced caller retries", err)
			}
			if tc.create == nil && (errors.Is(err, campaign.ErrThrottled) || errors.Is(err, campaign.ErrScheduleExists)) {
				t.Errorf("Create = %v: a plain error mapped onto a port error", err)
			}
			if err := c.Delete(ctx, "g", "n"); tc.create != nil && !errors.Is(err, tc.create) {
				t.Errorf("Delete = %v, want %v", err, tc.create)
			}
			ok, err := c.Exists(ctx, "g", "n")
			if ok != tc.exists || (err != nil) != tc.existsErr {
				t.Errorf("Exists = %v, %v; want %v, error %v", ok, err, tc.exists, tc.existsErr)
			}
		})
	}
}

// TestRequestsOnMoto runs the adapter against moto's scheduler: the request is
// accepted as built, Exists and Delete see it, a second schedule of the
// name is ErrScheduleExists, a missing one ErrScheduleNotFound.
func TestRequestsOnMoto(t *testing.T) {
	m := testenv.SharedMoto(t)
	api := m.SchedulerClient()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := api.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String("campaigns")}); err != nil {
		t.Fatal(err)
	}
	c, _ := awsscheduler.NewRequests(api)
	r := campaign.ScheduleFor(sendTask(), campaignTarget)
	if err := c.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := api.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(r.Name), GroupName: aws.String("campaigns")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(got.ScheduleExpression) != "at(2026-06-01T10:15:00)" || aws.ToString(got.ScheduleExpressionTimezone) != "Europe/Berlin" ||
		got.ActionAfterCompletion != types.ActionAfterCompletionDelete || aws.ToInt32(got.Target.RetryPolicy.MaximumRetryAttempts) != 2 {
		t.Fatalf("stored schedule %+v", got)
	}
	other := r
	other.ClientToken = "another-token"
	if err := c.Create(ctx, other); !errors.Is(err, campaign.ErrScheduleExists) {
		t.Fatalf("second create of the name = %v, want ErrScheduleExists", err)
	}
	if ok, err := c.Exists(ctx, "campaigns", r.Name); !ok || err != nil {
		t.Fatalf("Exists = %v, %v", ok, err)
	}
	if err := c.Delete(ctx, "campaigns", r.Name); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Exists(ctx, "campaigns", r.Name); ok || err != nil {
		t.Fatalf("Exists after delete = %v, %v", ok, err)
	}
	if err := c.Delete(ctx, "campaigns", r.Name); !errors.Is(err, campaign.ErrScheduleNotFound) {
		t.Fatalf("second delete = %v, want ErrScheduleNotFound", err)
	}
}

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

// TestClientMapsThrottlesOntoTheCore: every call of the task adapter
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
				RoleArn: "arn:aws:iam::123456789012:role/r", DeadLetterArn: "arn:aws:sqs:us-east-1:123456789012:q"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			s := timer.Schedule{Name: "n", At: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
			_, getErr := c.Get(ctx, "n", time.Time{})
			_, listErr := c.List(ctx, timer.PageRequest{})
			for op, err := range map[string]error{"Create": c.Create(ctx, s), "Update": c.Update(ctx, s, time.Time{}),
				"Delete": c.Delete(ctx, "n", time.Time{}), "Get": getErr, "List": listErr} {
				if err == nil || errors.Is(err, timer.ErrThrottled) != tc.throttle {
					t.Errorf("%s = %v; want throttle %v", op, err, tc.throttle)
				}
			}
		})
	}
}
