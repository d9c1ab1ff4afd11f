package awssfn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/domain/cancel"
	"github.com/unschedule/unschedule/internal/domain/task"
	"github.com/unschedule/unschedule/internal/layers"
	"github.com/unschedule/unschedule/internal/metrics"
	"github.com/unschedule/unschedule/internal/tableschema"
)

const (
	smArn      = "arn:aws:states:eu-west-1:111122223333:stateMachine:fire"
	execPrefix = "arn:aws:states:eu-west-1:111122223333:execution:fire:"
)

type exec struct {
	input  string
	status types.ExecutionStatus
}

// fakeSFN has the StartExecution semantics of a Standard state machine:
// the same name and input as a running execution succeeds; a closed one,
// or another input, is ExecutionAlreadyExists. StopExecution of a name
// never started is ExecutionDoesNotExist; of a closed one, a success that
// changes nothing (the API reference lists no error for it). It counts
// the calls by operation.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html
type fakeSFN struct {
	execs map[string]*exec
	calls map[string]int
}

func (f *fakeSFN) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	f.calls["StartExecution"]++
	n := aws.ToString(in.Name)
	if len(n) > layers.MaxExecutionName {
		return nil, errors.New("ValidationException: name too long " + n)
	}
	if e, ok := f.execs[n]; ok {
		if e.status == types.ExecutionStatusRunning && e.input == aws.ToString(in.Input) {
			return &sfn.StartExecutionOutput{}, nil
		}
		return nil, &types.ExecutionAlreadyExists{Message: aws.String("exists")}
	}
	f.execs[n] = &exec{input: aws.ToString(in.Input), status: types.ExecutionStatusRunning}
	return &sfn.StartExecutionOutput{}, nil
}

func (f *fakeSFN) name(arn string) (string, error) {
	if !strings.HasPrefix(arn, execPrefix) {
		return "", errors.New("InvalidArn: " + arn)
	}
	return strings.TrimPrefix(arn, execPrefix), nil
}

func (f *fakeSFN) StopExecution(_ context.Context, in *sfn.StopExecutionInput, _ ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error) {
	f.calls["StopExecution"]++
	n, err := f.name(aws.ToString(in.ExecutionArn))
	if err != nil {
		return nil, err
	}
	e, ok := f.execs[n]
	if !ok {
		return nil, &types.ExecutionDoesNotExist{Message: aws.String("no such execution")}
	}
	if e.status == types.ExecutionStatusRunning {
		e.status = types.ExecutionStatusAborted
	}
	return &sfn.StopExecutionOutput{}, nil
}

func (f *fakeSFN) DescribeExecution(_ context.Context, in *sfn.DescribeExecutionInput, _ ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	f.calls["DescribeExecution"]++
	n, err := f.name(aws.ToString(in.ExecutionArn))
	if err != nil {
		return nil, err
	}
	e, ok := f.execs[n]
	if !ok {
		return nil, &types.ExecutionDoesNotExist{}
	}
	return &sfn.DescribeExecutionOutput{Input: aws.String(e.input), Status: e.status}, nil
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newClient(t *testing.T) (*Client, *fakeSFN) {
	t.Helper()
	f := &fakeSFN{execs: map[string]*exec{}, calls: map[string]int{}}
	c, err := New(f, Config{StateMachineArn: smArn, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return c, f
}

const item = "01J0000000000000000000000A"

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
	s := sched(item, now.Add(time.Hour))
	for range 3 {
		if err := c.Create(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	want := layers.ExecutionName(s.Name, s.At)
	if r := running(f); len(f.execs) != 1 || len(r) != 1 || r[0] != want {
		t.Fatalf("executions %v running %v; want one execution %s", f.execs, r, want)
	}
	in := f.execs[want].input
	if !strings.Contains(in, `"at":"`+contract.FormatTime(s.At)+`"`) || !strings.Contains(in, `"taskId":"`+item+`"`) {
		t.Fatalf("input %s lacks the timestamp or the payload", in)
	}
}

func TestCreateWithAnotherInputIsAClearError(t *testing.T) {
	c, f := newClient(t)
	s := sched(item, now.Add(time.Hour))
	f.execs[layers.ExecutionName(s.Name, s.At)] = &exec{input: `{"other":1}`, status: types.ExecutionStatusRunning}
	err := c.Create(context.Background(), s)
	if !errors.Is(err, ErrInputConflict) || !strings.Contains(err.Error(), `{"other":1}`) {
		t.Fatalf("err %v; want ErrInputConflict naming both inputs", err)
	}
}

// A cancel or a move costs one StopExecution by the execution's ARN,
// whatever the number of other running executions (the API has no
// ListExecutions to call).
func TestCancelAndMoveAreOneStop(t *testing.T) {
	due, later := now.Add(time.Hour), now.Add(2*time.Hour)
	old, moved := sched(item, due), sched(item, later)
	ops := []struct {
		name      string
		do        func(c *Client) error
		wantCalls map[string]int
		wantRun   []string // the item's running executions after
	}{
		{"cancel", func(c *Client) error { return c.Delete(context.Background(), old.Name, due) },
			map[string]int{"StopExecution": 1}, nil},
		{"move", func(c *Client) error { return c.Update(context.Background(), moved, due) },
			map[string]int{"StopExecution": 1, "StartExecution": 1}, []string{layers.ExecutionName(moved.Name, later)}},
		{"reminder-only move (same due time)", func(c *Client) error { return c.Update(context.Background(), old, due) },
			map[string]int{"StartExecution": 1}, []string{layers.ExecutionName(old.Name, due)}},
	}
	for _, others := range []int{0, 1, 2500} {
		for _, op := range ops {
			t.Run(fmt.Sprintf("%s with %d others running", op.name, others), func(t *testing.T) {
				c, f := newClient(t)
				for i := range others {
					o := sched(fmt.Sprintf("01J%023d", i+1), now.Add(time.Duration(i+1)*time.Minute))
					f.execs[layers.ExecutionName(o.Name, o.At)] = &exec{status: types.ExecutionStatusRunning}
				}
				if err := c.Create(context.Background(), old); err != nil {
					t.Fatal(err)
				}
				clear(f.calls)
				if err := op.do(c); err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(f.calls) != fmt.Sprint(op.wantCalls) {
					t.Fatalf("calls %v; want %v", f.calls, op.wantCalls)
				}
				var mine []string
				for _, n := range running(f) {
					if strings.HasPrefix(n, old.Name+"-") {
						mine = append(mine, n)
					}
				}
				if fmt.Sprint(mine) != fmt.Sprint(op.wantRun) || len(running(f)) != others+len(op.wantRun) {
					t.Fatalf("item's running executions %v (of %d); want %v, and the %d others untouched",
						mine, len(running(f)), op.wantRun, others)
				}
			})
		}
	}
}

// An execution that never ran, or whose due time is not known, is
// task.ErrScheduleNotFound; one that closed already stops without error.
// Either is the worker's success path.
func TestGoneOrClosedIsNotFoundOrDone(t *testing.T) {
	due := now.Add(time.Hour)
	s := sched(item, due)
	for _, tc := range []struct {
		name      string
		status    types.ExecutionStatus // "" for no execution
		do        func(c *Client) error
		want      error
		wantStops int
	}{
		{"cancel of no execution", "", func(c *Client) error { return c.Delete(context.Background(), s.Name, due) },
			task.ErrScheduleNotFound, 1},
		{"cancel without a due time", types.ExecutionStatusRunning,
			func(c *Client) error { return c.Delete(context.Background(), s.Name, time.Time{}) }, task.ErrScheduleNotFound, 0},
		{"cancel of a fired execution", types.ExecutionStatusSucceeded,
			func(c *Client) error { return c.Delete(context.Background(), s.Name, due) }, nil, 1},
		{"move of no execution", "", func(c *Client) error {
			return c.Update(context.Background(), sched(item, due.Add(time.Hour)), due)
		}, task.ErrScheduleNotFound, 1},
		{"move without the old due time creates", "", func(c *Client) error {
			return c.Update(context.Background(), sched(item, due.Add(time.Hour)), time.Time{})
		}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newClient(t)
			if tc.status != "" {
				f.execs[layers.ExecutionName(s.Name, due)] = &exec{input: layers.ExecutionInput(contract.Default(), s), status: tc.status}
			}
			err := tc.do(c)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("err %v; want %v", err, tc.want)
			}
			if f.calls["StopExecution"] != tc.wantStops {
				t.Fatalf("%d stops; want %d", f.calls["StopExecution"], tc.wantStops)
			}
		})
	}
}

// The cancellation worker on this layer: a cancel or move message carries
// the old due time, and a cancel of an execution that is gone succeeds.
func TestWorkerCancelsByTheMessagesOldDueTime(t *testing.T) {
	due := now.Add(time.Hour)
	s := sched(item, due)
	for _, tc := range []struct {
		name   string
		create bool
		msg    cancel.Message
		metric string
	}{
		{"cancel", true, cancel.Message{Action: cancel.ActionCancel, Partition: "u1", Sort: item, OldDueAt: due, EventID: "e"},
			cancel.MetricCancelled},
		{"cancel after it fired or never ran", false, cancel.Message{Action: cancel.ActionCancel, Partition: "u1", Sort: item,
			OldDueAt: due, EventID: "e"}, cancel.MetricAlreadyGone},
		{"move", true, cancel.Message{Action: cancel.ActionReschedule, Partition: "u1", Sort: item, DueAt: due.Add(time.Hour),
			OldDueAt: due, EventID: "e"}, cancel.MetricRescheduled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newClient(t)
			if tc.create {
				if err := c.Create(context.Background(), s); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			rec := metrics.New("cancelworker", &out)
			w, err := cancel.NewWorker(tableschema.Todo(), c, rec, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Handle(context.Background(), tc.msg); err != nil {
				t.Fatal(err)
			}
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
			if f.calls["StopExecution"] != 1 || !strings.Contains(out.String(), tc.metric) {
				t.Fatalf("%d stops, metrics %s; want one stop and %s", f.calls["StopExecution"], out.String(), tc.metric)
			}
			if e := f.execs[layers.ExecutionName(s.Name, due)]; e != nil && e.status == types.ExecutionStatusRunning {
				t.Fatal("the old execution still runs")
			}
		})
	}
}

// An item armed again for a due time whose execution a cancel stopped
// gets a restart; a later cancel stops only the execution its due time
// names, so a restart may stay running beside a newer one. Each fires at
// the due time, and the claim (armed for that due time, then not armed)
// lets one fire at most: exactly once when the item ends armed, never
// when it ends cancelled.
func TestRearmAfterStopFiresOnce(t *testing.T) {
	due := now.Add(time.Hour)
	s := sched(item, due)
	type step string
	const arm, disarm step = "arm", "cancel"
	for _, tc := range []struct {
		name      string
		steps     []step
		wantFired int
	}{
		{"armed", []step{arm}, 1},
		{"armed, cancelled", []step{arm, disarm}, 0},
		{"armed, cancelled, armed again", []step{arm, disarm, arm}, 1},
		{"armed, cancelled, armed again, cancelled", []step{arm, disarm, arm, disarm}, 0},
		{"three re-arms", []step{arm, disarm, arm, disarm, arm, disarm, arm}, 1},
		{"retried creates", []step{arm, arm, disarm, arm, arm, arm}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newClient(t)
			clock := now
			c.cfg.Now = func() time.Time { return clock }
			armed, cancels := false, 0
			for _, st := range tc.steps {
				clock = clock.Add(time.Second) // each step a second later
				switch st {
				case arm:
					armed = true
					if err := c.Create(context.Background(), s); err != nil {
						t.Fatal(err)
					}
				case disarm:
					armed, cancels = false, cancels+1
					if err := c.Delete(context.Background(), s.Name, due); err != nil && !errors.Is(err, task.ErrScheduleNotFound) {
						t.Fatal(err)
					}
				}
				if f.calls["StopExecution"] != cancels {
					t.Fatalf("%d stops after %d cancels; want one each", f.calls["StopExecution"], cancels)
				}
			}
			// The due time comes: every running execution of the item
			// fires, and the claim lets the first through while the item
			// is armed for that due time.
			fired := 0
			for _, n := range running(f) {
				if !strings.HasPrefix(n, layers.ExecutionName(s.Name, due)) {
					t.Fatalf("unexpected execution %s", n)
				}
				if armed {
					fired, armed = fired+1, false
				}
			}
			if fired != tc.wantFired {
				t.Fatalf("fired %d times (running %v); want %d", fired, running(f), tc.wantFired)
			}
		})
	}
}

func TestBeyondOneYearIsRejected(t *testing.T) {
	far := sched(item, now.Add(400*24*time.Hour))
	for _, tc := range []struct {
		name string
		do   func(c *Client) error
	}{
		{"create", func(c *Client) error { return c.Create(context.Background(), far) }},
		{"move", func(c *Client) error { return c.Update(context.Background(), far, now.Add(time.Hour)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newClient(t)
			err := tc.do(c)
			if !errors.Is(err, layers.ErrBeyondHorizon) || len(f.calls) != 0 {
				t.Fatalf("err %v calls %v; want ErrBeyondHorizon and no call", err, f.calls)
			}
			// No retry changes the refusal: the cancel worker acknowledges it.
			var p interface{ Permanent() bool }
			if !errors.As(err, &p) || !p.Permanent() {
				t.Errorf("err %v does not report Permanent()", err)
			}
		})
	}
}
