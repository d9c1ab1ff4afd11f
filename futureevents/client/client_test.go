package client

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/unschedule/unschedule/futureevents"
	"github.com/unschedule/unschedule/internal/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.RunWithMoto(m)) }

const smArn = "arn:aws:states:us-east-1:123456789012:stateMachine:FutureEvents"

var now = time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeSFN keeps executions by name, answering as Step Functions does:
// same name and input while running is the same execution; a closed one
// or another input is ExecutionAlreadyExists.
type fakeSFN struct {
	execs    map[string]*types.ExecutionStatus
	inputs   map[string]string
	starts   int
	startErr error
}

func newFake() *fakeSFN {
	return &fakeSFN{execs: map[string]*types.ExecutionStatus{}, inputs: map[string]string{}}
}

func (f *fakeSFN) StartExecution(_ context.Context, in *sfn.StartExecutionInput, _ ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error) {
	f.starts++
	if f.startErr != nil {
		return nil, f.startErr
	}
	arn, _ := futureevents.ExecutionArn(*in.StateMachineArn, *in.Name)
	if st, ok := f.execs[*in.Name]; ok {
		if *st == types.ExecutionStatusRunning && f.inputs[*in.Name] == *in.Input {
			return &sfn.StartExecutionOutput{ExecutionArn: aws.String(arn)}, nil
		}
		return nil, &types.ExecutionAlreadyExists{Message: aws.String("exists")}
	}
	st := types.ExecutionStatusRunning
	f.execs[*in.Name], f.inputs[*in.Name] = &st, *in.Input
	return &sfn.StartExecutionOutput{ExecutionArn: aws.String(arn)}, nil
}

func (f *fakeSFN) name(arn string) string { return arn[strings.LastIndex(arn, ":")+1:] }

func (f *fakeSFN) StopExecution(_ context.Context, in *sfn.StopExecutionInput, _ ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error) {
	st, ok := f.execs[f.name(*in.ExecutionArn)]
	if !ok {
		return nil, &types.ExecutionDoesNotExist{Message: aws.String("no")}
	}
	*st = types.ExecutionStatusAborted
	return &sfn.StopExecutionOutput{}, nil
}

func (f *fakeSFN) DescribeExecution(_ context.Context, in *sfn.DescribeExecutionInput, _ ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error) {
	n := f.name(*in.ExecutionArn)
	st, ok := f.execs[n]
	if !ok {
		return nil, &types.ExecutionDoesNotExist{Message: aws.String("no")}
	}
	return &sfn.DescribeExecutionOutput{Status: *st, Input: aws.String(f.inputs[n])}, nil
}

const target = "arn:aws:lambda:us-east-1:123456789012:function:remind"

// scenario runs one history of calls against api and checks each result.
func scenario(t *testing.T, api API, arn string) {
	ctx := context.Background()
	c, err := New(api, arn)
	if err != nil {
		t.Fatal(err)
	}
	c = c.WithClock(func() time.Time { return now })
	at := now.Add(30 * 24 * time.Hour)
	steps := []struct {
		name    string
		do      func() error
		wantErr error
	}{
		{"first schedule", func() error {
			_, err := c.Schedule(ctx, "ann-2027", at, target, []byte(`{"email":"ann@example.com"}`))
			return err
		}, nil},
		{"same name, same input (key order, spaces aside) is no duplicate", func() error {
			_, err := c.Schedule(ctx, "ann-2027", at, target, []byte(`{ "email" : "ann@example.com" }`))
			return err
		}, nil},
		{"same name, another moment is a conflict", func() error {
			_, err := c.Schedule(ctx, "ann-2027", at.Add(time.Hour), target, []byte(`{"email":"ann@example.com"}`))
			return err
		}, futureevents.ErrNameConflict},
		{"same name, another payload is a conflict", func() error {
			_, err := c.Schedule(ctx, "ann-2027", at, target, []byte(`{"email":"bob@example.com"}`))
			return err
		}, futureevents.ErrNameConflict},
		{"cancel", func() error { return c.Cancel(ctx, "ann-2027") }, nil},
		{"cancel again: already stopped is success", func() error { return c.Cancel(ctx, "ann-2027") }, nil},
		{"cancel of a name never scheduled is success", func() error { return c.Cancel(ctx, "never-2027") }, nil},
		{"the cancelled name cannot start again", func() error {
			_, err := c.Schedule(ctx, "ann-2027", at, target, []byte(`{"email":"ann@example.com"}`))
			return err
		}, futureevents.ErrNameUsed},
	}
	for _, s := range steps {
		err := s.do()
		if s.wantErr == nil && err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.wantErr != nil && !errors.Is(err, s.wantErr) {
			t.Fatalf("%s: got %v, want %v", s.name, err, s.wantErr)
		}
	}
}

func TestClientAgainstFake(t *testing.T) { scenario(t, newFake(), smArn) }

// TestClientAgainstMoto runs the same history against moto's Step
// Functions, which answers StartExecution's idempotency as the API
// reference says (same name and input while RUNNING: the same execution;
// else ExecutionAlreadyExists) and StopExecution of an unknown ARN with
// ExecutionDoesNotExist.
func TestClientAgainstMoto(t *testing.T) {
	m := testenv.SharedMoto(t)
	api := sfn.New(sfn.Options{Region: testenv.MotoRegion, BaseEndpoint: aws.String(m.Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")})
	ctx := context.Background()
	out, err := api.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("FutureEvents"), RoleArn: aws.String("arn:aws:iam::123456789012:role/sfn"),
		Definition: aws.String(`{"StartAt":"Wait","States":{"Wait":{"Type":"Wait","TimestampPath":"$.timestamp","End":true}}}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	scenario(t, api, *out.StateMachineArn)
}

func TestClientErrors(t *testing.T) {
	f := newFake()
	c, _ := New(f, smArn)
	c = c.WithClock(func() time.Time { return now })
	ctx := context.Background()
	boom := errors.New("throttled")
	for _, tc := range []struct {
		name     string
		execName string
		at       time.Time
		target   string
		payload  string
		startErr error
		want     error
		wantText string
	}{
		{name: "past moment", execName: "a", at: now.Add(-time.Second), target: target, want: futureevents.ErrInvalid, wantText: "not in the future"},
		{name: "now is not the future", execName: "a", at: now, target: target, want: futureevents.ErrInvalid},
		{name: "exactly the horizon is accepted", execName: "h", at: now.Add(futureevents.MaxHorizon), target: target},
		{name: "beyond one year", execName: "a", at: now.Add(futureevents.MaxHorizon + time.Second), target: target, want: futureevents.ErrInvalid, wantText: "at most one year"},
		{name: "no target", execName: "a", at: now.Add(time.Hour), want: futureevents.ErrInvalid, wantText: "AddTarget"},
		{name: "payload not JSON", execName: "a", at: now.Add(time.Hour), target: target, payload: "{", want: futureevents.ErrInvalid},
		{name: "invalid name", execName: "ann@example.com", at: now.Add(time.Hour), target: target, want: futureevents.ErrInvalid, wantText: "futureevents.Name"},
		{name: "service error is wrapped", execName: "b", at: now.Add(time.Hour), target: target, startErr: boom, want: boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.startErr = tc.startErr
			starts := f.starts
			_, err := c.Schedule(ctx, tc.execName, tc.at, tc.target, []byte(tc.payload))
			if tc.want == nil && err != nil {
				t.Fatal(err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if tc.wantText != "" && !strings.Contains(err.Error(), tc.wantText) {
				t.Fatalf("error %q lacks %q", err, tc.wantText)
			}
			if errors.Is(tc.want, futureevents.ErrInvalid) && f.starts != starts {
				t.Fatal("an invalid request reached Step Functions")
			}
		})
	}
}
