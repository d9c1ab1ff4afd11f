package awssfn

import (
	"context"
	"errors"
	"os"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.RunWithMoto(m)) }

// The adapter against moto's Step Functions: start, list, describe and
// stop round trip through the real API shapes (the ARN derived from the
// state machine's, the RUNNING filter, the input read back). moto leaves
// an execution RUNNING until it is stopped, as a Wait months long does.
func TestReaderRoundTripOnMoto(t *testing.T) {
	api, smArn := motoStateMachine(t)
	ctx := context.Background()
	c, err := New(api, Config{StateMachineArn: smArn, Schema: timertest.Schema, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	d1, d2 := now.Add(time.Hour), now.Add(2*time.Hour)
	a, b := sched(item, d1), sched("01J0000000000000000000000B", d2)
	for _, s := range []timer.Schedule{a, b, a} {
		if err := c.Arm(ctx, s); err != nil {
			t.Fatalf("create %s: %v", s.Name, err)
		}
	}
	listAll := func() []timer.Schedule {
		t.Helper()
		var out []timer.Schedule
		page := timer.PageRequest{Limit: 1}
		for range 10 {
			p, err := c.List(ctx, page)
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			out = append(out, p.Schedules...)
			if page.Cursor = p.Cursor; p.Cursor == "" {
				break
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
		return out
	}
	if got, want := listAll(), []timer.Schedule{{Name: a.Name, At: d1}, {Name: b.Name, At: d2}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %+v; want %+v", got, want)
	}
	for _, s := range []timer.Schedule{a, b} {
		got, err := c.Get(ctx, s.Name, s.At)
		want := s
		want.ClientToken = ""
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("get %s = %+v, %v; want %+v", s.Name, got, err, want)
		}
	}
	if err := c.Disarm(ctx, b.Name, d2); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := c.Get(ctx, b.Name, d2); !errors.Is(err, timer.ErrNotFound) {
		t.Fatalf("get of the stopped execution: %v; want ErrNotFound", err)
	}
	if _, err := c.Get(ctx, a.Name, d2); !errors.Is(err, timer.ErrNotFound) {
		t.Fatalf("get of a due time never started: %v; want ErrNotFound", err)
	}
	if got, want := listAll(), []timer.Schedule{{Name: a.Name, At: d1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed after the stop %+v; want %+v", got, want)
	}
	// Armed again for the same due time, three times (reconciler passes
	// at three seconds): one restart, named after moto's stopDate of the
	// stopped execution, listed under the item's name and due time, and
	// read by Get.
	clock := now
	c.cfg.Now = func() time.Time { return clock }
	for range 3 {
		clock = clock.Add(time.Second)
		if err := c.Arm(ctx, b); err != nil {
			t.Fatalf("re-arm: %v", err)
		}
	}
	if got, want := listAll(), []timer.Schedule{{Name: a.Name, At: d1}, {Name: b.Name, At: d2}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed after the re-arm %+v; want %+v", got, want)
	}
	running := func() []string {
		t.Helper()
		out, err := api.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn), StatusFilter: "RUNNING"})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range out.Executions {
			names = append(names, aws.ToString(e.Name))
		}
		sort.Strings(names)
		return names
	}
	link := func(prev time.Time, closed string) (string, time.Time) {
		t.Helper()
		d, err := api.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(c.executionArn(closed))})
		if err != nil || d.StopDate == nil {
			t.Fatalf("describe %s: %+v, %v; want a stopDate", closed, d, err)
		}
		sec := timerspec.RestartSecond(prev, *d.StopDate)
		return timerspec.RestartName(timerspec.ExecutionName(b.Name, d2), sec), sec
	}
	r1, s1 := link(time.Time{}, timerspec.ExecutionName(b.Name, d2))
	if got, want := running(), []string{timerspec.ExecutionName(a.Name, d1), r1}; !reflect.DeepEqual(got, want) {
		t.Fatalf("running %v; want %v", got, want)
	}
	if got, err := c.Get(ctx, b.Name, d2); err != nil || got.Name != b.Name || !got.At.Equal(d2) || got.Payload != b.Payload {
		t.Fatalf("get of the restart = %+v, %v; want %+v", got, err, b)
	}
	// Cancelled again, then armed again: the next link, and only it.
	if err := c.Disarm(ctx, b.Name, d2); err != nil {
		t.Fatalf("cancel of the restart: %v", err)
	}
	if _, err := c.Get(ctx, b.Name, d2); !errors.Is(err, timer.ErrNotFound) {
		t.Fatalf("get after the cancel: %v; want ErrNotFound", err)
	}
	for range 2 {
		if err := c.Arm(ctx, b); err != nil {
			t.Fatalf("re-arm: %v", err)
		}
	}
	r2, _ := link(s1, r1)
	if got, want := running(), []string{timerspec.ExecutionName(a.Name, d1), r2}; !reflect.DeepEqual(got, want) {
		t.Fatalf("running %v; want %v", got, want)
	}
}

// The reader contract every timer shares, on a fresh state machine per
// case.
func TestReaderContractOnMoto(t *testing.T) {
	testenv.SharedMoto(t)                              // skip (or fail under CI=true) once, before the cases
	t0 := time.Date(2029, 12, 1, 0, 0, 0, 0, time.UTC) // before the contract's due times, within a year
	timertest.ReaderContract(t, timertest.ReaderBackend{NamedByDueTime: true, New: func(t *testing.T) timertest.ContractTimer {
		api, smArn := motoStateMachine(t)
		c, err := New(api, Config{StateMachineArn: smArn, Schema: timertest.Schema, Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}})
}

// motoStateMachine resets moto and creates a state machine that waits for
// $.at.
func motoStateMachine(t *testing.T) (*sfn.Client, string) {
	t.Helper()
	m := testenv.SharedMoto(t)
	api := sfn.New(sfn.Options{Region: testenv.MotoRegion, BaseEndpoint: aws.String(m.Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")})
	sm, err := api.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{
		Name:    aws.String("fire"),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/sfn"),
		Definition: aws.String(`{"StartAt":"` + timerspec.WaitState + `","States":{"` + timerspec.WaitState +
			`":{"Type":"Wait","TimestampPath":"` + timerspec.TimestampPath + `","End":true}}}`),
	})
	if err != nil {
		t.Fatalf("create state machine: %v", err)
	}
	return api, aws.ToString(sm.StateMachineArn)
}
