package lambdatarget

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/unschedule/unschedule/futureevents/futureevent"
)

type fakeAPI struct {
	in  *lambda.InvokeInput
	out *lambda.InvokeOutput
	err error
}

func (f *fakeAPI) Invoke(_ context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.in = in
	return f.out, f.err
}

func TestInvoke(t *testing.T) {
	boom := errors.New("throttled")
	for _, tc := range []struct {
		name string
		api  *fakeAPI
		want error
	}{
		{"ok", &fakeAPI{out: &lambda.InvokeOutput{StatusCode: 200}}, nil},
		{"function error", &fakeAPI{out: &lambda.InvokeOutput{FunctionError: aws.String("Unhandled"), Payload: []byte(`{"errorMessage":"x"}`)}}, futureevent.ErrTargetFailed},
		{"call error", &fakeAPI{err: boom}, boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := New(tc.api)
			if err != nil {
				t.Fatal(err)
			}
			err = inv.Invoke(context.Background(), "arn:fn", []byte(`{"a":1}`))
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if tc.api.in.InvocationType != types.InvocationTypeRequestResponse || string(tc.api.in.Payload) != `{"a":1}` || *tc.api.in.FunctionName != "arn:fn" {
				t.Fatalf("input %+v", tc.api.in)
			}
		})
	}
}
