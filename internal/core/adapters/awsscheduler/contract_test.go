package awsscheduler_test

import (
	"context"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/unschedule/unschedule/internal/core/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.RunWithMoto(m)) }

// TestTimerContractMoto runs the timer contract on the adapter
// against moto's EventBridge Scheduler, each case on a fresh account.
func TestTimerContractMoto(t *testing.T) {
	testenv.SharedMoto(t) // skip (or fail under CI=true) once, before the cases
	timertest.TimerContract(t, timertest.TimerBackend{Moto: true, New: func(t *testing.T) timertest.ContractTimer {
		api := testenv.SharedMoto(t).SchedulerClient()
		const group = "unschedule-tasks"
		if _, err := api.CreateScheduleGroup(context.Background(), &scheduler.CreateScheduleGroupInput{Name: aws.String(group)}); err != nil {
			t.Fatalf("create schedule group: %v", err)
		}
		c, err := awsscheduler.New(api, awsscheduler.Config{
			GroupName:     group,
			TargetArn:     "arn:aws:lambda:us-east-1:123456789012:function:expire",
			RoleArn:       "arn:aws:iam::123456789012:role/scheduler",
			DeadLetterArn: "arn:aws:sqs:us-east-1:123456789012:expiry-dlq",
			Schema:        timertest.Schema,
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}})
}
