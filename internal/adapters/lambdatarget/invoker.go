// Package lambdatarget is the Lambda adapter of the future-events
// handler's Invoker port: a synchronous (RequestResponse) invoke whose
// FunctionError counts as a failure.
// https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html
package lambdatarget

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/unschedule/unschedule/internal/adapters/awslambda"
	"github.com/unschedule/unschedule/internal/futureevent"
)

// maxDetail bounds how much of a failed target's response an error quotes.
const maxDetail = 512

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

// Invoke implements futureevent.Invoker.
func (i *Invoker) Invoke(ctx context.Context, target string, payload []byte) error {
	out, err := i.api.Invoke(ctx, &lambda.InvokeInput{
		FunctionName: aws.String(target), InvocationType: types.InvocationTypeRequestResponse, Payload: payload,
	})
	if err != nil {
		return err
	}
	if out.FunctionError != nil {
		detail := out.Payload
		if len(detail) > maxDetail {
			detail = detail[:maxDetail]
		}
		return fmt.Errorf("%w (%s): %s", futureevent.ErrTargetFailed, aws.ToString(out.FunctionError), detail)
	}
	return nil
}
