package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/awssfn"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// startsSFN is a state machine with no running execution that records the
// executions started.
type startsSFN struct{ started []string }

func (f *startsSFN) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	f.started = append(f.started, aws.ToString(in.Name))
	return &sfn.StartExecutionOutput{}, nil
}
func (f *startsSFN) StopExecution(context.Context, *sfn.StopExecutionInput, ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error) {
	return &sfn.StopExecutionOutput{}, nil
}
func (f *startsSFN) DescribeExecution(context.Context, *sfn.DescribeExecutionInput, ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	return &sfn.DescribeExecutionOutput{}, nil
}

// On the Step Functions timer a due time beyond the horizon is refused for
// good: the worker acknowledges the message (no batch item failure, so no
// redelivery and no dead-letter queue), counts it in ScheduleRefused (an
// error metric, so alarmed) and logs it with the item's key, and the next
// message of the same item's group is applied in the same batch.
func TestBeyondHorizonIsAcknowledgedCountedAndLogged(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	msg := func(id, taskID string, due time.Time) events.SQSMessage {
		m := cancel.Message{Action: cancel.ActionSchedule, Partition: "user-1", Sort: taskID, DueAt: due, Token: "tok", EventID: id}
		return events.SQSMessage{MessageId: id, Body: string(m.Encode()), Attributes: map[string]string{"MessageGroupId": m.GroupID()}}
	}
	for _, tc := range []struct {
		name        string
		batch       []events.SQSMessage
		wantStarted []string // the items whose execution started, in order
		wantRefused int
	}{
		{"beyond the horizon, then a move back within it, in one group", []events.SQSMessage{
			msg("m-1", taskA, now.Add(timerspec.MaxHorizon+time.Hour)), msg("m-2", taskA, now.Add(24*time.Hour)), msg("m-3", taskB, now.Add(time.Hour)),
		}, []string{taskA, taskB}, 1},
		{"within the horizon", []events.SQSMessage{msg("m-1", taskA, now.Add(timerspec.MaxHorizon))}, []string{taskA}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &startsSFN{}
			sched, err := awssfn.New(api, awssfn.Config{StateMachineArn: "arn:aws:states:eu-west-1:111122223333:stateMachine:fire",
				Schema: timertest.Schema, Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			var out, logs bytes.Buffer
			rec := metrics.New(FunctionName, &out)
			log := slog.New(slog.NewJSONHandler(&logs, nil))
			w, err := cancel.NewWorker(timertest.Schema, sched, rec, log)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&handler{worker: w, metrics: rec, log: log}).handle(context.Background(), events.SQSEvent{Records: tc.batch})
			if err != nil {
				t.Fatal(err)
			}
			if len(resp.BatchItemFailures) != 0 {
				t.Errorf("batch item failures %v, want none: a refusal no retry changes is acknowledged", resp.BatchItemFailures)
			}
			if len(api.started) != len(tc.wantStarted) {
				t.Fatalf("executions started %v, want one for each of %v", api.started, tc.wantStarted)
			}
			for i, id := range tc.wantStarted {
				if !strings.Contains(api.started[i], id) {
					t.Errorf("execution %d is %s, want one of %s", i, api.started[i], id)
				}
			}
			if tc.wantRefused == 0 {
				if strings.Contains(out.String(), metrics.ScheduleRefused) {
					t.Errorf("metrics %s count a refusal", out.String())
				}
				return
			}
			if !strings.Contains(out.String(), `"`+metrics.ScheduleRefused+`":1`) || strings.Contains(out.String(), metrics.RetryableFailures) {
				t.Errorf("metrics %s: want %s=1 and no %s", out.String(), metrics.ScheduleRefused, metrics.RetryableFailures)
			}
			var refused []map[string]any
			for line := range strings.Lines(logs.String()) {
				var l map[string]any
				if err := json.Unmarshal([]byte(line), &l); err != nil {
					t.Fatalf("log line %q is not JSON: %v", line, err)
				}
				if l["level"] == "ERROR" && strings.Contains(l["error"].(string), timerspec.ErrBeyondHorizon.Error()) {
					refused = append(refused, l)
				}
			}
			if len(refused) != 1 || refused[0]["key"] != (contract.Key{Partition: "user-1", Sort: taskA}).String() {
				t.Errorf("refusal log lines %v, want one with the key of %s", refused, taskA)
			}
		})
	}
}
