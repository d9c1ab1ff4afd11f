// Package lambdainvoke starts Lambda functions asynchronously
// (InvocationType Event): the campaign API starting provisioning, the
// provisioning function re-invoking itself with its checkpoint saved,
// the reconciler handing an overdue task to the send function.
package lambdainvoke

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignlambda"
)

// API is the part of the Lambda client the invoker uses.
type API interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

var _ API = (*lambda.Client)(nil)

// Invoker invokes one function asynchronously.
type Invoker struct {
	api      API
	function string
}

// New returns an Invoker of function (a name or an ARN).
func New(api API, function string) (*Invoker, error) {
	if api == nil || function == "" {
		return nil, errors.New("lambdainvoke: a Lambda client and a function are required")
	}
	return &Invoker{api: api, function: function}, nil
}

// Async queues one invocation with payload as its event (Lambda answers
// 202 once it has queued it).
func (i *Invoker) Async(ctx context.Context, payload any) error {
	b, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("invoke %s: encode: %w", i.function, err)
	}
	out, err := i.api.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(i.function),
		InvocationType: types.InvocationTypeEvent, Payload: b})
	if err != nil {
		return fmt.Errorf("invoke %s: %w", i.function, err)
	}
	if out.StatusCode != 202 {
		return fmt.Errorf("invoke %s: status %d, want 202 (queued)", i.function, out.StatusCode)
	}
	return nil
}

// Start queues a provisioning run of the campaign (campaignapi.Starter,
// and the self re-invoke).
func (i *Invoker) Start(ctx context.Context, campaignID string) error {
	return i.Async(ctx, campaignlambda.ProvisionEvent{CampaignID: campaignID})
}

// Dispatch hands a task to the send function now (campaign.Dispatcher).
func (i *Invoker) Dispatch(ctx context.Context, e campaign.FireEvent) error { return i.Async(ctx, e) }

var (
	_ campaign.Dispatcher    = (*Invoker)(nil)
	_ campaignlambda.Starter = (*Invoker)(nil)
)
