package reconciler

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// nagRule is one cdk-nag (AwsSolutions) finding that is by design.
type nagRule struct {
	id, reason string
	// appliesTo narrows a granular finding: a string such as "Resource::*"
	// or map[string]string{"regex": "/^...$/g"}.
	appliesTo []any
}

// nagSuppress records why res's findings are by design, as the "cdk_nag"
// metadata cdk-nag reads. It is plain CloudFormation metadata, so this
// package does not depend on cdk-nag.
func nagSuppress(res constructs.IConstruct, rules ...nagRule) {
	list := make([]any, len(rules))
	for i, r := range rules {
		m := map[string]any{"id": r.id, "reason": r.reason}
		if len(r.appliesTo) > 0 {
			m["applies_to"] = r.appliesTo
		}
		list[i] = m
	}
	res.(awscdk.CfnResource).AddMetadata(jsii.String("cdk_nag"), map[string]any{"rules_to_suppress": list})
}

// rolePolicy is the CloudFormation policy that grants add to fn's role.
func rolePolicy(fn awslambda.Function) constructs.IConstruct {
	return fn.Role().Node().FindChild(jsii.String("DefaultPolicy")).Node().DefaultChild()
}

// scheduleGroupWildcard matches a "schedules of one group" resource.
var scheduleGroupWildcard = map[string]string{
	"regex": `/^Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule\/[^/*]+\/\*$/g`,
}
