package resource

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
)

// DefaultLambdaTimeoutSec is Lambda's timeout for a function that sets
// none.
// https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html
const DefaultLambdaTimeoutSec = 3

// FunctionTimeoutSec is fn's timeout in seconds when synth can read it:
// for a Function of this app, from its CfnFunction (unset is Lambda's
// default). ok is false for an imported function, an alias or version,
// or a timeout that is a token.
func FunctionTimeoutSec(fn awslambda.IFunction) (sec float64, ok bool) {
	if fn == nil {
		return 0, false
	}
	cfn, isFn := fn.Node().DefaultChild().(awslambda.CfnFunction)
	if !isFn {
		return 0, false
	}
	t := cfn.Timeout()
	if t == nil {
		return DefaultLambdaTimeoutSec, true
	}
	if *awscdk.Token_IsUnresolved(*t) {
		return 0, false
	}
	return *t, true
}
