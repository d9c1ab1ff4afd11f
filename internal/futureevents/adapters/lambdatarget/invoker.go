// Package lambdatarget is the Lambda adapter of the future-events
// dispatcher's Invoker port: a synchronous (RequestResponse) invoke whose
// FunctionError counts as a failure.
// https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
package lambdatarget

import (
	"context"
	"errors"
	"fmt"

	"github.com/unschedule/unschedule/futureevents/futureevent"
	"github.com/unschedule/unschedule/internal/core/adapters/awslambda"
)

// Invoker invokes any function it is given (the handler decides which).
type Invoker struct{ api awslambda.API }

var _ futureevent.Invoker = (*Invoker)(nil)

// New returns an invoker on api.
func New(api awslambda.API) (*Invoker, error) {
	if api == nil {
		return nil, errors.New("lambdatarget: the Lambda API client is nil")
	}
	return &Invoker{api: api}, nil
}

// Invoke implements futureevent.Invoker: awslambda.InvokeSync, with a
// failed target reported as futureevent.ErrTargetFailed.
func (i *Invoker) Invoke(ctx context.Context, target string, payload []byte) error {
	err := awslambda.InvokeSync(ctx, i.api, target, payload)
	if errors.Is(err, awslambda.ErrTargetFailed) {
		return fmt.Errorf("%w: %w", futureevent.ErrTargetFailed, err)
	}
	return err
}
