// Package sfnretry holds the retries every Step Functions task that
// invokes a Lambda function needs for Lambda's own transient failures, so
// the state machines of the constructs retry them the same way.
//
// AWS's best practice "Handle Lambda service exceptions" names the 500
// errors (ClientExecutionTimeoutException, ServiceException,
// AWSLambdaException, SdkClientException) and the throttling error
// (Lambda.TooManyRequestsException, when Lambda hits its concurrency):
// https://docs.aws.amazon.com/step-functions/latest/dg/bp-lambda-serviceexception.html
// Lambda.Unknown (timeouts, out of memory) is the task's own failure, left
// to the caller's retrier.
package sfnretry

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctionstasks"
	"github.com/aws/jsii-runtime-go"
)

// TransientErrors are Lambda's transient errors: its service exceptions
// and throttling.
var TransientErrors = []string{
	"Lambda.ClientExecutionTimeoutException", "Lambda.ServiceException",
	"Lambda.AWSLambdaException", "Lambda.SdkClientException",
	"Lambda.TooManyRequestsException",
}

// Unknown is Lambda's unhandled error (timeout, out of memory).
const Unknown = "Lambda.Unknown"

// The transient retrier: 2 s, doubling, capped at 2 minutes, 10 attempts
// with full jitter: about 10 minutes in all, so a burst of executions
// throttled together spreads out instead of retrying in step.
const (
	TransientIntervalSec = 2
	TransientBackoffRate = 2
	TransientMaxDelaySec = 120
	TransientMaxAttempts = 10
)

// AddTransient adds the transient retrier to task. Call it before any
// other AddRetry (Step Functions uses the first retrier whose errors
// match), and build task with RetryOnServiceExceptions false: this
// retrier replaces CDK's, which lacks the throttling error and jitter.
func AddTransient(task awsstepfunctionstasks.LambdaInvoke) {
	task.AddRetry(&awsstepfunctions.RetryProps{
		Errors:         jsii.Strings(TransientErrors...),
		Interval:       awscdk.Duration_Seconds(jsii.Number(TransientIntervalSec)),
		BackoffRate:    jsii.Number(TransientBackoffRate),
		MaxDelay:       awscdk.Duration_Seconds(jsii.Number(TransientMaxDelaySec)),
		MaxAttempts:    jsii.Number(TransientMaxAttempts),
		JitterStrategy: awsstepfunctions.JitterType_FULL,
	})
}
