package lambdainvoke

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
)

type fake struct {
	status int32
	err    error
	in     []*lambda.InvokeInput
}

func (f *fake) Invoke(_ context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.in = append(f.in, in)
	return &lambda.InvokeOutput{StatusCode: f.status}, f.err
}

func TestInvokesAsynchronously(t *testing.T) {
	cases := []struct {
		name    string
		status  int32
		err     error
		call    func(*Invoker) error
		payload string
		wantErr bool
	}{
		{"start", 202, nil, func(i *Invoker) error { return i.Start(context.Background(), "c1") }, `{"campaignId":"c1"}`, false},
		{"dispatch", 202, nil, func(i *Invoker) error {
			return i.Dispatch(context.Background(), campaign.FireEvent{CampaignID: "c1", TaskID: "c1-00001"})
		}, `{"campaignId":"c1","taskId":"c1-00001"}`, false},
		{"not queued", 200, nil, func(i *Invoker) error { return i.Start(context.Background(), "c1") }, `{"campaignId":"c1"}`, true},
		{"refused", 0, errors.New("throttled"), func(i *Invoker) error { return i.Start(context.Background(), "c1") }, `{"campaignId":"c1"}`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fake{status: tc.status, err: tc.err}
			i, _ := New(f, "fn")
			if err := tc.call(i); (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			in := f.in[0]
			if aws.ToString(in.FunctionName) != "fn" || in.InvocationType != types.InvocationTypeEvent || string(in.Payload) != tc.payload {
				t.Fatalf("input %+v payload %s", in, in.Payload)
			}
		})
	}
}
