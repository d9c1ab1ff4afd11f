package awslambda

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
)

type fakeAPI struct {
	in  []*lambda.InvokeInput
	out *lambda.InvokeOutput
	err error
}

func (f *fakeAPI) Invoke(_ context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.in = append(f.in, in)
	if f.err != nil {
		return nil, f.err
	}
	return f.out, nil
}

func TestDeliver(t *testing.T) {
	s := contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt",
		ArmedStates: []string{"Queued"}, FiredState: "Done", ScheduleNamePrefix: "job-"}.WithDefaults()
	p := contract.Payload{Key: contract.Key{Partition: "t1", Sort: "j1"}, Due: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	boom := errors.New("throttled")
	for _, tc := range []struct {
		name       string
		api        *fakeAPI
		wantErr    error // nil: success
		wantFailed bool
	}{
		{"success", &fakeAPI{out: &lambda.InvokeOutput{StatusCode: 200, Payload: []byte(`null`)}}, nil, false},
		{"the target failed", &fakeAPI{out: &lambda.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"),
			Payload: []byte(`{"errorMessage":"no"}`)}}, ErrTargetFailed, true},
		{"the call failed", &fakeAPI{err: boom}, boom, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(tc.api, "arn:aws:lambda:eu-west-1:123456789012:function:target", s)
			if err != nil {
				t.Fatal(err)
			}
			err = d.Deliver(context.Background(), p)
			if (err != nil) != tc.wantFailed || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
				t.Fatalf("Deliver = %v, want %v", err, tc.wantErr)
			}
			if len(tc.api.in) != 1 {
				t.Fatalf("%d invocations, want 1", len(tc.api.in))
			}
			in := tc.api.in[0]
			if in.InvocationType != types.InvocationTypeRequestResponse ||
				aws.ToString(in.FunctionName) != "arn:aws:lambda:eu-west-1:123456789012:function:target" ||
				string(in.Payload) != `{"jobId":"j1","runAt":"2030-01-02T03:04:05Z","tenantId":"t1"}` {
				t.Fatalf("invoke input %+v (payload %s)", in, in.Payload)
			}
		})
	}
	if _, err := New(&fakeAPI{}, "", s); err == nil {
		t.Fatal("New without a target succeeded")
	}
}

// The reconciler's firer through the firing function: the payload goes
// to that function, success is a firing, a failed function an error.
func TestFirer(t *testing.T) {
	s := contract.Default()
	p := contract.Payload{Key: contract.Key{Partition: "t1", Sort: "j1"}, Due: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	for _, tc := range []struct {
		name    string
		api     *fakeAPI
		want    fire.Outcome
		wantErr bool
	}{
		{"fired", &fakeAPI{out: &lambda.InvokeOutput{StatusCode: 200, Payload: []byte(`null`)}}, fire.Fired, false},
		{"the firing function failed (its claim held elsewhere, say)", &fakeAPI{out: &lambda.InvokeOutput{StatusCode: 200,
			FunctionError: aws.String("Unhandled"), Payload: []byte(`{"errorMessage":"in progress"}`)}}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := NewFirer(tc.api, "arn:fire", s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.Fire(context.Background(), p)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Fatalf("Fire = %q, %v; want %q, error %v", got, err, tc.want, tc.wantErr)
			}
			if len(tc.api.in) != 1 || aws.ToString(tc.api.in[0].FunctionName) != "arn:fire" || string(tc.api.in[0].Payload) != s.EncodePayload(p) {
				t.Fatalf("invocations %+v, want one of the firing function with the payload", tc.api.in)
			}
		})
	}
}
