// Package grants holds the permission builders several constructs share.
package grants

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// CognitoInvoke lets Amazon Cognito invoke fn as a trigger of pool only: a
// resource-based policy statement for cognito-idp.amazonaws.com with the
// pool's ARN as source. Cognito needs it to run any Lambda trigger, and
// only its console adds it by itself; a pool configured through the API,
// the CLI or CloudFormation fails the operation with AccessDeniedException
// without it (https://repost.aws/knowledge-center/cognito-lambda-trigger-errors,
// https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-properties-cognito-userpool-lambdaconfig.html).
// CDK's UserPool.AddTrigger adds the same statement for a pool it owns.
// id names the permission (CDK's own is "<Trigger>Cognito").
func CognitoInvoke(fn awslambda.Function, id string, pool awscognito.IUserPool) {
	fn.AddPermission(jsii.String(id), &awslambda.Permission{
		Principal: awsiam.NewServicePrincipal(jsii.String("cognito-idp.amazonaws.com"), nil),
		SourceArn: pool.UserPoolArn(),
	})
}
