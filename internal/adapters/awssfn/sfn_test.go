package awssfn

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/layers"
)

const smArn = "arn:aws:states:eu-west-1:111122223333:stateMachine:fire"

type exec struct {
	input  string
	status types.ExecutionStatus
}

// fakeSFN has the StartExecution semantics of a Standard state machine:
// the same name and input as a running execution succeeds; a closed one,
// or another input, is ExecutionAlreadyExists.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
type fakeSFN struct {
	execs  map[string]*exec
	starts int
}

func (f *fakeSFN) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	n := aws.ToString(in.Name)
	if e, ok := f.execs[n]; ok {
		if e.status == types.ExecutionStatusRunning && e.input == aws.ToString(in.Input) {
			return &sfn.StartExecutionOutput{}, nil
		}
		return nil, &types.ExecutionAlreadyExists{Message: aws.String("exists")}
	}
	f.starts++
	f.execs[n] = &exec{input: aws.ToString(in.Input), status: types.ExecutionStatusRunning}
	return &sfn.StartExecutionOutput{}, nil
}

func (f *fakeSFN) StopExecution(_ context.Context, in *sfn.StopExecutionInput, _ ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error) {
	n := aws.ToString(in.ExecutionArn)
	n = n[strings.LastIndex(n, ":")+1:]
	e, ok := f.execs[n]
	if !ok {
		return nil, &types.ExecutionDoesNotExist{}
	}
	e.status = types.ExecutionStatusAborted
	return &sfn.StopExecutionOutput{}, nil
}

func (f *fakeSFN) ListExecutions(_ context.Context, in *sfn.ListExecutionsInput, _ ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error) {
	out := &sfn.ListExecutionsOutput{}
	for n, e := range f.execs {
		if e.status == in.StatusFilter {
			out.Executions = append(out.Executions, types.ExecutionListItem{Name: aws.String(n),
				ExecutionArn: aws.String("arn:aws:states:eu-west-1:111122223333:execution:fire:" + n)})
		}
	}
	return out, nil
}

func (f *fakeSFN) DescribeExecution(_ context.Context, in *sfn.DescribeExecutionInput, _ ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	n := aws.ToString(in.ExecutionArn)
	if !strings.HasPrefix(n, "arn:aws:states:eu-west-1:111122223333:execution:fire:") {
		return nil, errors.New("bad execution arn " + n)
	}
	e, ok := f.execs[n[strings.LastIndex(n, ":")+1:]]
	if !ok {
		return nil, &types.ExecutionDoesNotExist{}
	}
	return &sfn.DescribeExecutionOutput{Input: aws.String(e.input), Status: e.status}, nil
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newClient(t *testing.T) (*Client, *fakeSFN) {
	t.Helper()
	f := &fakeSFN{execs: map[string]*exec{}}
	c, err := New(f, Config{StateMachineArn: smArn, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return c, f
}

func sched(id string, due time.Time) task.Schedule {
	return task.ScheduleFor(task.Task{UserID: "u1", TaskID: id, Status: task.StatusPending, DueAt: due})
}

func running(f *fakeSFN) []string {
	var out []string
	for n, e := range f.execs {
		if e.status == types.ExecutionStatusRunning {
			out = append(out, n)
		}
	}
	return out
}

func TestCreateIsIdempotentAndNamedByItemAndDue(t *testing.T) {
	c, f := newClient(t)
	s := sched("01J0000000000000000000000A", now.Add(time.Hour))
	for range 3 {
		if err := c.Create(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	want := layers.ExecutionName(s.Name, s.At)
	if r := running(f); f.starts != 1 || len(r) != 1 || r[0] != want {
		t.Fatalf("starts %d running %v; want one execution %s", f.starts, r, want)
	}
	in := f.execs[want].input
	if !strings.Contains(in, `"at":"`+contract.FormatTime(s.At)+`"`) || !strings.Contains(in, `"taskId":"01J0000000000000000000000A"`) {
		t.Fatalf("input %s lacks the timestamp or the payload", in)
	}
}

func TestCreateWithAnotherInputIsAClearError(t *testing.T) {
	c, f := newClient(t)
	s := sched("01J0000000000000000000000A", now.Add(time.Hour))
	f.execs[layers.ExecutionName(s.Name, s.At)] = &exec{input: `{"other":1}`, status: types.ExecutionStatusRunning}
	err := c.Create(context.Background(), s)
	if !errors.Is(err, ErrInputConflict) || !strings.Contains(err.Error(), `{"other":1}`) {
		t.Fatalf("err %v; want ErrInputConflict naming both inputs", err)
	}
}

func TestMoveStopsTheOldAndStartsTheNew(t *testing.T) {
	c, f := newClient(t)
	old := sched("01J0000000000000000000000A", now.Add(time.Hour))
	moved := sched("01J0000000000000000000000A", now.Add(2*time.Hour))
	if err := c.Update(context.Background(), moved); !errors.Is(err, task.ErrScheduleNotFound) {
		t.Fatalf("update without execution: %v; want ErrScheduleNotFound", err)
	}
	if err := c.Create(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	if err := c.Update(context.Background(), moved); err != nil {
		t.Fatal(err)
	}
	if r := running(f); len(r) != 1 || r[0] != layers.ExecutionName(moved.Name, moved.At) {
		t.Fatalf("running %v; want only the moved execution", r)
	}
	if f.execs[layers.ExecutionName(old.Name, old.At)].status != types.ExecutionStatusAborted {
		t.Fatal("the old execution was not stopped")
	}
}

func TestCancelStopsAndNotFoundIsGone(t *testing.T) {
	c, f := newClient(t)
	s := sched("01J0000000000000000000000A", now.Add(time.Hour))
	if err := c.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(context.Background(), s.Name); err != nil {
		t.Fatal(err)
	}
	if len(running(f)) != 0 {
		t.Fatal("still running after cancel")
	}
	if err := c.Delete(context.Background(), s.Name); !errors.Is(err, task.ErrScheduleNotFound) {
		t.Fatalf("second cancel: %v; want ErrScheduleNotFound (the worker's success)", err)
	}
	// Armed again for the same due time: the stopped name is taken, the
	// next suffix runs.
	if err := c.Create(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	restart := layers.RestartName(layers.ExecutionName(s.Name, s.At), now)
	if r := running(f); len(r) != 1 || r[0] != restart {
		t.Fatalf("running %v; want the restart %s", r, restart)
	}
	// A retried create while the restart runs starts nothing more.
	if err := c.Create(context.Background(), s); err != nil || len(running(f)) != 1 {
		t.Fatalf("retry: %v, running %v", err, running(f))
	}
}

func TestCreateBeyondOneYearIsRejected(t *testing.T) {
	c, f := newClient(t)
	err := c.Create(context.Background(), sched("01J0000000000000000000000A", now.Add(400*24*time.Hour)))
	if !errors.Is(err, layers.ErrBeyondHorizon) || f.starts != 0 {
		t.Fatalf("err %v starts %d; want ErrBeyondHorizon and no execution", err, f.starts)
	}
	// No retry changes the refusal: the cancel worker acknowledges it.
	var p interface{ Permanent() bool }
	if !errors.As(err, &p) || !p.Permanent() {
		t.Errorf("err %v does not report Permanent()", err)
	}
}
