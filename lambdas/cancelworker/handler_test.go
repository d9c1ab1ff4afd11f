package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/tooling/testfixture"
)

const (
	taskA = "01JD00000000000000000000AA"
	taskB = "01JD00000000000000000000BB"
)

func fixture(t *testing.T, name string) events.SQSEvent {
	return testfixture.Load[events.SQSEvent](t, name)
}

func TestHandle(t *testing.T) {
	existing := func(id string) contract.Schedule {
		return timertest.Schema.ScheduleFor(contract.Item{Key: contract.Key{Partition: "user-1", Sort: id}, State: "Pending",
			Due: time.Date(2030, 1, 3, 0, 0, 0, 0, time.UTC), Token: "tok"})
	}
	tests := []struct {
		name         string
		schedules    []contract.Schedule
		fail         func(op, name string) error
		wantFailures []string
		wantLeft     []string
	}{
		{"cancel, then move and cancel in one group; malformed fails", []contract.Schedule{existing(taskA), existing(taskB)}, nil,
			[]string{"m-4"}, nil},
		{"schedules already gone: still success", nil, nil, []string{"m-4"}, nil},
		{"a throttled move fails its group's later messages too", []contract.Schedule{existing(taskA), existing(taskB)},
			func(op, _ string) error {
				if op == "Move" {
					return errors.New("ThrottlingException")
				}
				return nil
			}, []string{"m-2", "m-3", "m-4"}, []string{timertest.Schema.ScheduleName(contract.Key{Partition: "user-1", Sort: taskB})}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := inmem.NewScheduler()
			for _, sc := range tt.schedules {
				if err := s.Arm(context.Background(), sc); err != nil {
					t.Fatal(err)
				}
			}
			s.Fail = tt.fail
			var out bytes.Buffer
			rec := metrics.New(FunctionName, &out)
			log := slog.New(slog.DiscardHandler)
			w, err := cancel.NewWorker(timertest.Schema, s, rec, log)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&handler{worker: w, metrics: rec, log: log}).handle(context.Background(), fixture(t, "batch.json"))
			if err != nil {
				t.Fatal(err)
			}
			var failures []string
			for _, f := range resp.BatchItemFailures {
				failures = append(failures, f.ItemIdentifier)
			}
			if !slices.Equal(failures, tt.wantFailures) {
				t.Errorf("batch item failures %v, want %v", failures, tt.wantFailures)
			}
			var left []string
			for _, sc := range s.All() {
				left = append(left, sc.Name)
			}
			if !slices.Equal(left, tt.wantLeft) {
				t.Errorf("schedules left %v, want %v", left, tt.wantLeft)
			}
			if !strings.Contains(out.String(), `"Malformed":1`) {
				t.Errorf("metrics %q lack Malformed=1", out.String())
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	full := map[string]string{"SCHEDULE_GROUP": "tasks", "SCHEDULE_TARGET_ARN": "arn:fn", "SCHEDULER_ROLE_ARN": "arn:role",
		"SCHEDULER_DLQ_ARN": "arn:dlq", contract.EnvVar: timertest.Schema.EnvValue()}
	without := func(k string) map[string]string {
		m := map[string]string{}
		for kk, v := range full {
			if kk != k {
				m[kk] = v
			}
		}
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"complete", full, ""},
		{"no group", without("SCHEDULE_GROUP"), "SCHEDULE_GROUP"},
		{"no target", without("SCHEDULE_TARGET_ARN"), "SCHEDULE_TARGET_ARN"},
		{"no role", without("SCHEDULER_ROLE_ARN"), "SCHEDULER_ROLE_ARN"},
		{"no dlq", without("SCHEDULER_DLQ_ARN"), "SCHEDULER_DLQ_ARN"},
		{"no schema", without(contract.EnvVar), contract.EnvVar + " is not set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			want := awsscheduler.Config{GroupName: "tasks", TargetArn: "arn:fn", RoleArn: "arn:role", DeadLetterArn: "arn:dlq",
				MaxRetryAttempts: 3, MaxEventAgeSec: 86400, Schema: timertest.Schema}
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("loadConfig = %+v, %v; want %+v", got, err, want)
			}
		})
	}
}
