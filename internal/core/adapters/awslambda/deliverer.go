// Package awslambda is the Lambda adapter of the firing core's Deliverer
// port: it runs the adopter's target function with an item's payload,
// synchronously, so the firing function records the delivery only after
// the target succeeded.
package awslambda

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
)

// API is the part of the Lambda client the deliverer uses.
type API interface {
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

var _ API = (*lambda.Client)(nil)

// ErrTargetFailed: the target ran and failed (the response carried a
// FunctionError: an error it returned, a panic, a timeout). Test with
// errors.Is.
var ErrTargetFailed = errors.New("target function failed")

// maxDetail bounds how much of a failed target's response an error
// quotes.
const maxDetail = 512

// Deliverer invokes one target function with InvocationType
// RequestResponse and the payload as the schema renders it
// (contract.Schema.EncodePayload): {"<partition key>", "<sort key>",
// "<due attribute>"}.
// https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
type Deliverer struct {
	api    API
	target string
	schema contract.Schema
}

var _ fire.Deliverer = (*Deliverer)(nil)

// New returns a deliverer to the target function (a name or ARN).
func New(api API, target string, s contract.Schema) (*Deliverer, error) {
	if api == nil {
		return nil, errors.New("awslambda: the Lambda API client is nil")
	}
	if target == "" {
		return nil, errors.New("awslambda: the target function is empty: set it to the function's ARN")
	}
	return &Deliverer{api: api, target: target, schema: s}, nil
}

// Deliver implements fire.Deliverer. A call that fails, or a response
// with a FunctionError, is a failed delivery: the firing is retried, and
// no delivery is recorded.
func (d *Deliverer) Deliver(ctx context.Context, p contract.Payload) error {
	if err := InvokeSync(ctx, d.api, d.target, []byte(d.schema.EncodePayload(p))); err != nil {
		return fmt.Errorf("invoke %s for %s: %w", d.target, p.Key, err)
	}
	return nil
}

// Firer fires an item by invoking the firing function with its payload
// (RequestResponse), as a timer would: that function claims the item and
// runs the target inside it (ScheduleOnWriteProps.FireEntry). It is the
// reconciler's way to fire an overdue item whose target has no function
// of its own; claiming here as well would hold the claim the firing
// function needs.
type Firer struct{ fn *Deliverer }

// NewFirer returns a firer through the firing function fn (a name or ARN).
func NewFirer(api API, fn string, s contract.Schema) (*Firer, error) {
	d, err := New(api, fn, s)
	if err != nil {
		return nil, err
	}
	return &Firer{fn: d}, nil
}

// Fire invokes the firing function with the payload. Success is
// fire.Fired: the function does not say whether it skipped the item (gone
// or moved meanwhile), so a skip counts as a firing. An error (the
// function failed, or its claim was held by another attempt) is retried
// by the next run.
func (f *Firer) Fire(ctx context.Context, p contract.Payload) (fire.Outcome, error) {
	if err := f.fn.Deliver(ctx, p); err != nil {
		return "", err
	}
	return fire.Fired, nil
}

// InvokeSync runs function target (a name or ARN) with payload and waits
// for it (InvocationType RequestResponse). A response with a
// FunctionError (an error the function returned, a panic, a timeout) is
// an error wrapping ErrTargetFailed that quotes the start of the response.
// https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
func InvokeSync(ctx context.Context, api API, target string, payload []byte) error {
	out, err := api.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(target),
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        payload,
	})
	if err != nil {
		return err
	}
	if out.FunctionError != nil {
		detail := out.Payload
		if len(detail) > maxDetail {
			detail = detail[:maxDetail]
		}
		return fmt.Errorf("%w (%s): %s", ErrTargetFailed, aws.ToString(out.FunctionError), detail)
	}
	return nil
}
