package awssfn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

const (
	smArn      = "arn:aws:states:eu-west-1:111122223333:stateMachine:fire"
	execPrefix = "arn:aws:states:eu-west-1:111122223333:execution:fire:"
)

type exec struct {
	input  string
	status types.ExecutionStatus
	// stopped is the stop date of a closed execution (zero: the fake's
	// clock at the start of the test, now).
	stopped time.Time
}

// fakeSFN has the StartExecution semantics of a Standard state machine:
// the same name and input as a running execution succeeds; a closed one,
// or another input, is ExecutionAlreadyExists. StopExecution of a name
// never started is ExecutionDoesNotExist; of a closed one, a success that
// changes nothing (the API reference lists no error for it).
// DescribeExecution gives a closed execution's stopDate, the clock's time
// when it was stopped. It counts the calls by operation.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_StopExecution.html
type fakeSFN struct {
	execs map[string]*exec
	calls map[string]int
	// lists holds each ListExecutions input; fail, when set, is the
	// error of every DescribeExecution and ListExecutions.
	lists []sfn.ListExecutionsInput
	fail  error
	// clock tells the time of a stop (nil: now).
	clock func() time.Time
}

// ListExecutions pages through the executions of the status filter, in
// name order (AWS lists the most recent first: the order is not part of
// the contract); the token is the offset.
// https://docs.aws.amazon.com/step-functions/latest/apireference/API_ListExecutions.html
func (f *fakeSFN) ListExecutions(_ context.Context, in *sfn.ListExecutionsInput, _ ...func(*sfn.Options)) (*sfn.ListExecutionsOutput, error) {
	f.calls["ListExecutions"]++
	f.lists = append(f.lists, *in)
	if f.fail != nil {
		return nil, f.fail
	}
	if aws.ToString(in.StateMachineArn) != smArn {
		return nil, errors.New("StateMachineDoesNotExist: " + aws.ToString(in.StateMachineArn))
	}
	var names []string
	for n, e := range f.execs {
		if in.StatusFilter == "" || e.status == in.StatusFilter {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	from := 0
	if in.NextToken != nil {
		var err error
		if from, err = strconv.Atoi(*in.NextToken); err != nil {
			return nil, errors.New("InvalidToken: " + *in.NextToken)
		}
	}
	size := int(in.MaxResults)
	if size == 0 {
		size = 100
	}
	out := &sfn.ListExecutionsOutput{}
	for i := from; i < len(names) && i < from+size; i++ {
		out.Executions = append(out.Executions, types.ExecutionListItem{Name: aws.String(names[i]),
			ExecutionArn: aws.String(execPrefix + names[i]), Status: f.execs[names[i]].status})
	}
	if from+size < len(names) {
		out.NextToken = aws.String(strconv.Itoa(from + size))
	}
	return out, nil
}

func (f *fakeSFN) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	f.calls["StartExecution"]++
	n := aws.ToString(in.Name)
	if len(n) > timerspec.MaxExecutionName {
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
		e.status, e.stopped = types.ExecutionStatusAborted, now
		if f.clock != nil {
			e.stopped = f.clock()
		}
	}
	return &sfn.StopExecutionOutput{}, nil
}

func (f *fakeSFN) DescribeExecution(_ context.Context, in *sfn.DescribeExecutionInput, _ ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	f.calls["DescribeExecution"]++
	if f.fail != nil {
		return nil, f.fail
	}
	n, err := f.name(aws.ToString(in.ExecutionArn))
	if err != nil {
		return nil, err
	}
	e, ok := f.execs[n]
	if !ok {
		return nil, &types.ExecutionDoesNotExist{}
	}
	out := &sfn.DescribeExecutionOutput{Input: aws.String(e.input), Status: e.status, Name: aws.String(n)}
	if e.status != types.ExecutionStatusRunning {
		out.StopDate = aws.Time(now)
		if !e.stopped.IsZero() {
			out.StopDate = aws.Time(e.stopped)
		}
	}
	return out, nil
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func newClient(t *testing.T) (*Client, *fakeSFN) {
	t.Helper()
	f := &fakeSFN{execs: map[string]*exec{}, calls: map[string]int{}}
	c, err := New(f, Config{StateMachineArn: smArn, Schema: timertest.Schema, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	return c, f
}

const item = "01J0000000000000000000000A"

func sched(id string, due time.Time) contract.Schedule {
	return timertest.Schema.ScheduleFor(contract.Item{Key: contract.Key{Partition: "u1", Sort: id}, State: "Pending", Due: due})
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
		if err := c.Arm(context.Background(), s); err != nil {
			t.Fatal(err)
		}
	}
	want := timerspec.ExecutionName(s.Name, s.At)
	if r := running(f); len(f.execs) != 1 || len(r) != 1 || r[0] != want {
		t.Fatalf("executions %v running %v; want one execution %s", f.execs, r, want)
	}
	in := f.execs[want].input
	if !strings.Contains(in, `"at":"`+contract.FormatTime(s.At)+`"`) || !strings.Contains(in, `"itemId":"`+item+`"`) {
		t.Fatalf("input %s lacks the timestamp or the payload", in)
	}
}

func TestCreateWithAnotherInputIsAClearError(t *testing.T) {
	c, f := newClient(t)
	s := sched(item, now.Add(time.Hour))
	f.execs[timerspec.ExecutionName(s.Name, s.At)] = &exec{input: `{"other":1}`, status: types.ExecutionStatusRunning}
	err := c.Arm(context.Background(), s)
	if !errors.Is(err, ErrInputConflict) || !strings.Contains(err.Error(), `{"other":1}`) {
		t.Fatalf("err %v; want ErrInputConflict naming both inputs", err)
	}
}

// A cancel or a move costs one DescribeExecution and one StopExecution by
// the execution's ARN, whatever the number of other running executions:
// it lists none.
func TestCancelAndMoveAreOneStop(t *testing.T) {
	due, later := now.Add(time.Hour), now.Add(2*time.Hour)
	old, moved := sched(item, due), sched(item, later)
	ops := []struct {
		name      string
		do        func(c *Client) error
		wantCalls map[string]int
		wantRun   []string // the item's running executions after
	}{
		{"cancel", func(c *Client) error { return c.Disarm(context.Background(), old.Name, due) },
			map[string]int{"DescribeExecution": 1, "StopExecution": 1}, nil},
		{"move", func(c *Client) error { return c.Move(context.Background(), moved, due) },
			map[string]int{"DescribeExecution": 1, "StopExecution": 1, "StartExecution": 1}, []string{timerspec.ExecutionName(moved.Name, later)}},
		{"reminder-only move (same due time)", func(c *Client) error { return c.Move(context.Background(), old, due) },
			map[string]int{"StartExecution": 1}, []string{timerspec.ExecutionName(old.Name, due)}},
	}
	for _, others := range []int{0, 1, 2500} {
		for _, op := range ops {
			t.Run(fmt.Sprintf("%s with %d others running", op.name, others), func(t *testing.T) {
				c, f := newClient(t)
				for i := range others {
					o := sched(fmt.Sprintf("01J%023d", i+1), now.Add(time.Duration(i+1)*time.Minute))
					f.execs[timerspec.ExecutionName(o.Name, o.At)] = &exec{status: types.ExecutionStatusRunning}
				}
				if err := c.Arm(context.Background(), old); err != nil {
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

// An execution that never ran, fired or was stopped already, or whose
// due time is not known, is timer.ErrNotFound, and nothing is
// stopped: the worker's success path.
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
		{"cancel of no execution", "", func(c *Client) error { return c.Disarm(context.Background(), s.Name, due) },
			timer.ErrNotFound, 0},
		{"cancel without a due time", types.ExecutionStatusRunning,
			func(c *Client) error { return c.Disarm(context.Background(), s.Name, time.Time{}) }, timer.ErrNotFound, 0},
		{"cancel of a fired execution", types.ExecutionStatusSucceeded,
			func(c *Client) error { return c.Disarm(context.Background(), s.Name, due) }, timer.ErrNotFound, 0},
		{"cancel of a stopped execution", types.ExecutionStatusAborted,
			func(c *Client) error { return c.Disarm(context.Background(), s.Name, due) }, timer.ErrNotFound, 0},
		{"cancel of a running execution", types.ExecutionStatusRunning,
			func(c *Client) error { return c.Disarm(context.Background(), s.Name, due) }, nil, 1},
		{"move of no execution", "", func(c *Client) error {
			return c.Move(context.Background(), sched(item, due.Add(time.Hour)), due)
		}, timer.ErrNotFound, 0},
		{"move without the old due time creates", "", func(c *Client) error {
			return c.Move(context.Background(), sched(item, due.Add(time.Hour)), time.Time{})
		}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newClient(t)
			if tc.status != "" {
				f.execs[timerspec.ExecutionName(s.Name, due)] = &exec{input: timerspec.ExecutionInput(contract.Default(), s), status: tc.status}
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

// The cancellation worker on this timer: a cancel or move message carries
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
				if err := c.Arm(context.Background(), s); err != nil {
					t.Fatal(err)
				}
			}
			var out bytes.Buffer
			rec := metrics.New("cancelworker", &out)
			w, err := cancel.NewWorker(timertest.Schema, c, rec, slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil)))
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Handle(context.Background(), tc.msg); err != nil {
				t.Fatal(err)
			}
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
			wantStops := 0
			if tc.create {
				wantStops = 1
			}
			if f.calls["StopExecution"] != wantStops || !strings.Contains(out.String(), tc.metric) {
				t.Fatalf("%d stops, metrics %s; want %d and %s", f.calls["StopExecution"], out.String(), wantStops, tc.metric)
			}
			if e := f.execs[timerspec.ExecutionName(s.Name, due)]; e != nil && e.status == types.ExecutionStatusRunning {
				t.Fatal("the old execution still runs")
			}
		})
	}
}

// An item armed again for a due time whose execution a cancel stopped
// gets a restart, the next link of the chain; a cancel stops the link
// that runs. So whatever the steps, the item runs one execution while it
// is armed and none when it is not, and fires exactly once when it ends
// armed, never when it ends cancelled.
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
		{"retried cancels", []step{arm, disarm, disarm, arm, disarm, disarm, arm, arm}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newClient(t)
			clock := now
			c.cfg.Now = func() time.Time { return clock }
			f.clock = func() time.Time { return clock }
			armed := false
			for i, st := range tc.steps {
				clock = clock.Add(time.Second) // each step a second later
				switch st {
				case arm:
					armed = true
					if err := c.Arm(context.Background(), s); err != nil {
						t.Fatal(err)
					}
				case disarm:
					armed = false
					if err := c.Disarm(context.Background(), s.Name, due); err != nil && !errors.Is(err, timer.ErrNotFound) {
						t.Fatal(err)
					}
				}
				if r := running(f); (len(r) == 1) != armed || len(r) > 1 {
					t.Fatalf("step %d (%s): running %v; want one while armed, none otherwise", i, st, r)
				}
			}
			// The due time comes: every running execution of the item
			// fires, and the claim lets the first through while the item
			// is armed for that due time.
			fired := 0
			for _, n := range running(f) {
				if !strings.HasPrefix(n, timerspec.ExecutionName(s.Name, due)) {
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
		{"create", func(c *Client) error { return c.Arm(context.Background(), far) }},
		{"move", func(c *Client) error { return c.Move(context.Background(), far, now.Add(time.Hour)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newClient(t)
			err := tc.do(c)
			if !errors.Is(err, timerspec.ErrBeyondHorizon) || len(f.calls) != 0 {
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

// Get reads the running execution named for the due time, with the due
// time and payload of its input; anything else is timer.ErrNotFound. A
// closed one is followed to its restart (TestRestartChain).
func TestGetReadsTheRunningExecutionOfTheDueTime(t *testing.T) {
	due := now.Add(time.Hour)
	s := sched(item, due)
	want := s
	want.ClientToken = ""
	throttled := errors.New("ThrottlingException: slow down")
	for _, tc := range []struct {
		name      string
		status    types.ExecutionStatus // "" for no execution
		input     string                // "" for the input Arm writes
		at        time.Time
		fail      error
		want      error // nil: want the schedule
		wantCalls int
	}{
		{"running", types.ExecutionStatusRunning, "", due, nil, nil, 1},
		{"running, asked without a due time", types.ExecutionStatusRunning, "", time.Time{}, nil, timer.ErrNotFound, 0},
		{"running, asked for another due time", types.ExecutionStatusRunning, "", due.Add(time.Second), nil, timer.ErrNotFound, 1},
		{"never started", "", "", due, nil, timer.ErrNotFound, 1},
		{"stopped, and no restart", types.ExecutionStatusAborted, "", due, nil, timer.ErrNotFound, 2},
		{"fired", types.ExecutionStatusSucceeded, "", due, nil, timer.ErrNotFound, 1},
		{"failed, and no restart", types.ExecutionStatusFailed, "", due, nil, timer.ErrNotFound, 2},
		{"throttled", types.ExecutionStatusRunning, "", due, throttled, throttled, 1},
		{"input not JSON", types.ExecutionStatusRunning, "{", due, nil, errBadInput, 1},
		{"payload of another schema", types.ExecutionStatusRunning, `{"at":"2026-11-30T13:00:00Z","payload":{"x":"1"}}`, due, nil, errBadInput, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, f := newClient(t)
			if tc.status != "" {
				in := tc.input
				if in == "" {
					in = timerspec.ExecutionInput(timertest.Schema, s)
				}
				f.execs[timerspec.ExecutionName(s.Name, due)] = &exec{input: in, status: tc.status}
			}
			f.fail = tc.fail
			got, err := c.Get(context.Background(), s.Name, tc.at)
			switch {
			case tc.want == nil && (err != nil || !reflect.DeepEqual(got, want)):
				t.Fatalf("get = %+v, %v; want %+v", got, err, want)
			case tc.want == errBadInput && (err == nil || errors.Is(err, timer.ErrNotFound)):
				t.Fatalf("get: %v; want an error that is not ErrNotFound", err)
			case tc.want != nil && tc.want != errBadInput && !errors.Is(err, tc.want):
				t.Fatalf("get: %v; want %v", err, tc.want)
			}
			if tc.fail != nil && errors.Is(err, timer.ErrNotFound) {
				t.Fatalf("get: %v; a failed call is not ErrNotFound", err)
			}
			if f.calls["DescribeExecution"] != tc.wantCalls {
				t.Fatalf("%d describes; want %d", f.calls["DescribeExecution"], tc.wantCalls)
			}
		})
	}
}

var errBadInput = errors.New("a bad input")

// List gives one entry per running execution of the schema's items, the
// item's name and the due time the execution's name holds (a restart's
// too), in pages of at most the limit, whatever other executions run.
func TestListGivesEachRunningExecution(t *testing.T) {
	d1, d2, d3 := now.Add(time.Hour), now.Add(2*time.Hour), now.Add(3*time.Hour)
	a, b := sched(item, d1), sched("01J0000000000000000000000B", d2)
	ctx := context.Background()
	for _, limit := range []int{1, 2, 3, 50} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			c, f := newClient(t)
			clock := now
			c.cfg.Now = func() time.Time { return clock }
			for _, step := range []func() error{
				func() error { return c.Arm(ctx, a) },
				func() error { return c.Arm(ctx, b) },
				func() error { return c.Disarm(ctx, b.Name, d2) }, // cancelled: not listed
				func() error { return c.Disarm(ctx, a.Name, d1) },
				func() error { clock = clock.Add(time.Second); return c.Arm(ctx, a) }, // re-armed: a restart
				func() error { return c.Arm(ctx, sched(item, d3)) },                   // a create that raced a move
			} {
				if err := step(); err != nil {
					t.Fatal(err)
				}
			}
			// Executions that are not the schema's items'.
			for _, n := range []string{"other-1798761600", strings.Repeat("ab", 32), "item-x-r"} {
				f.execs[n] = &exec{status: types.ExecutionStatusRunning}
			}
			var got []timer.Schedule
			page := timer.PageRequest{Limit: limit}
			for range 20 {
				p, err := c.List(ctx, page)
				if err != nil {
					t.Fatal(err)
				}
				if len(p.Schedules) > limit {
					t.Fatalf("a page of %d; limit %d", len(p.Schedules), limit)
				}
				got = append(got, p.Schedules...)
				if page.Cursor = p.Cursor; p.Cursor == "" {
					break
				}
			}
			sort.Slice(got, func(i, j int) bool { return got[i].At.Before(got[j].At) })
			want := []timer.Schedule{{Name: a.Name, At: d1}, {Name: a.Name, At: d3}}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("listed %+v; want %+v", got, want)
			}
			for _, in := range f.lists {
				if in.StatusFilter != types.ExecutionStatusRunning || int(in.MaxResults) != limit {
					t.Fatalf("ListExecutions input %+v; want RUNNING and maxResults %d", in, limit)
				}
			}
		})
	}
}

func TestListPageSizeAndErrors(t *testing.T) {
	for _, tc := range []struct{ limit, want int }{{0, timer.DefaultLimit}, {-1, timer.DefaultLimit}, {1000, 1000}, {5000, 1000}} {
		c, f := newClient(t)
		if _, err := c.List(context.Background(), timer.PageRequest{Limit: tc.limit}); err != nil {
			t.Fatal(err)
		}
		if got := int(f.lists[0].MaxResults); got != tc.want {
			t.Fatalf("limit %d: maxResults %d; want %d", tc.limit, got, tc.want)
		}
	}
	c, f := newClient(t)
	f.fail = errors.New("InvalidToken: expired")
	if _, err := c.List(context.Background(), timer.PageRequest{Cursor: "old"}); !errors.Is(err, f.fail) ||
		aws.ToString(f.lists[0].NextToken) != "old" {
		t.Fatalf("list: %v (token %v); want the error wrapped, the cursor sent", err, f.lists[0].NextToken)
	}
}

// A client that only arms and disarms (no ListExecutions) builds, and
// List says what is missing.
func TestListWithoutListExecutionsIsAnError(t *testing.T) {
	f := &fakeSFN{execs: map[string]*exec{}, calls: map[string]int{}}
	c, err := New(struct{ API }{f}, Config{StateMachineArn: smArn, Schema: timertest.Schema})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(context.Background(), timer.PageRequest{}); err == nil || !strings.Contains(err.Error(), "ListExecutions") {
		t.Fatalf("list: %v; want an error naming ListExecutions", err)
	}
}
