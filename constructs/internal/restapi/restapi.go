// Package restapi holds what every REST API of the constructs shares
// (constructs/taskapi, constructs/campaigns): the JSON access log line
// and its wiring on a stage, and the CORS preflight of the allowed
// origins, so the APIs log and answer browsers alike.
package restapi

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"
)

// AccessLogFormat is one JSON object per request: API Gateway's standard
// fields (without the IAM caller, always empty here) and the Cognito sub
// of the caller, so a request in the log names the user it acted for.
const AccessLogFormat = `{"requestId":"$context.requestId","ip":"$context.identity.sourceIp","user":"$context.identity.user",` +
	`"sub":"$context.authorizer.claims.sub","requestTime":"$context.requestTime","httpMethod":"$context.httpMethod",` +
	`"resourcePath":"$context.resourcePath","status":"$context.status","protocol":"$context.protocol",` +
	`"responseLength":"$context.responseLength"}`

// AccessLogs sends stage's access log to logs, one AccessLogFormat line
// per request.
func AccessLogs(stage *awsapigateway.StageOptions, logs awslogs.ILogGroup) {
	stage.AccessLogDestination = awsapigateway.NewLogGroupLogDestination(logs)
	stage.AccessLogFormat = awsapigateway.AccessLogFormat_Custom(jsii.String(AccessLogFormat))
}

// CorsPreflight answers the browsers' preflight of origins for methods
// (OPTIONS among them), with the headers the web app sends (its Cognito
// token and a JSON body), cached for an hour.
func CorsPreflight(origins []string, methods ...string) *awsapigateway.CorsOptions {
	return &awsapigateway.CorsOptions{
		AllowOrigins: jsii.Strings(origins...),
		AllowMethods: jsii.Strings(methods...),
		AllowHeaders: jsii.Strings("Authorization", "Content-Type"),
		MaxAge:       awscdk.Duration_Hours(jsii.Number(1)),
	}
}
