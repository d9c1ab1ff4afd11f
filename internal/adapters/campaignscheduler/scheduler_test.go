package campaignscheduler

import (
	"context"
	"errors"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.RunWithMoto(m)) }

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

var target = campaign.Target{GroupName: "campaigns", FunctionArn: "arn:aws:lambda:us-east-1:123456789012:function:send",
	RoleArn: "arn:aws:iam::123456789012:role/sched", DeadLetterArn: "arn:aws:sqs:us-east-1:123456789012:dlq"}

func task() campaign.SendTask {
	return campaign.SendTask{CampaignID: "c1", ID: "c1-00007", Local: "2026-06-01T10:15:00", TimeZone: "Europe/Berlin",
		SchedulerRequestToken: "5f0c2c1e-4a7b-4d2e-9b61-3f1f1e0c7a55", State: campaign.Pending}
}

func TestCreateSendsTheRequestAsIs(t *testing.T) {
	f := &fake{}
	c, _ := New(f)
	if err := c.Create(context.Background(), campaign.ScheduleFor(task(), target)); err != nil {
		t.Fatal(err)
	}
	want := &scheduler.CreateScheduleInput{
		Name: aws.String("camp-c1-00007"), GroupName: aws.String("campaigns"),
		ScheduleExpression: aws.String("at(2026-06-01T10:15:00)"), ScheduleExpressionTimezone: aws.String("Europe/Berlin"),
		FlexibleTimeWindow:    &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
		ActionAfterCompletion: types.ActionAfterCompletionDelete, State: types.ScheduleStateEnabled,
		ClientToken: aws.String("5f0c2c1e-4a7b-4d2e-9b61-3f1f1e0c7a55"),
		Target: &types.Target{Arn: aws.String(target.FunctionArn), RoleArn: aws.String(target.RoleArn),
			Input:            aws.String(`{"campaignId":"c1","taskId":"c1-00007"}`),
			RetryPolicy:      &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(2)},
			DeadLetterConfig: &types.DeadLetterConfig{Arn: aws.String(target.DeadLetterArn)}},
	}
	if len(f.creates) != 1 || !reflect.DeepEqual(f.creates[0], want) {
		t.Fatalf("CreateSchedule input\n got %+v\nwant %+v", f.creates, want)
	}
}

func TestErrorsMapOntoThePort(t *testing.T) {
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
			c, _ := New(&fake{err: tc.sdk})
			ctx := context.Background()
			err := c.Create(ctx, campaign.ScheduleFor(task(), target))
			if (tc.sdk == nil) != (err == nil) || (tc.create != nil && !errors.Is(err, tc.create)) {
				t.Errorf("Create = %v, want %v", err, tc.create)
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

// TestOnMoto runs the adapter against moto's scheduler: the request is
// accepted as built, Exists and Delete see it, a second schedule of the
// name is ErrScheduleExists, a missing one ErrScheduleNotFound.
func TestOnMoto(t *testing.T) {
	m := testenv.SharedMoto(t)
	api := m.SchedulerClient()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := api.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String("campaigns")}); err != nil {
		t.Fatal(err)
	}
	c, _ := New(api)
	r := campaign.ScheduleFor(task(), target)
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
