// Package nag records, next to the resource that causes it, why a cdk-nag
// (AwsSolutions) finding is by design. Every suppression names one rule,
// one resource (or construct subtree), and a reason; granular rules are
// narrowed with AppliesTo so a new wildcard is still reported.
package nag

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

// Rule is one accepted finding.
type Rule struct {
	ID     string
	Reason string
	// AppliesTo narrows a granular finding: a string such as "Resource::*"
	// or map[string]string{"regex": "/^...$/g"}.
	AppliesTo []any
}

// Suppress accepts rules on scope and its children.
func Suppress(scope constructs.IConstruct, rules ...Rule) {
	list := make([]*cdknag.NagPackSuppression, len(rules))
	for i, r := range rules {
		s := &cdknag.NagPackSuppression{Id: jsii.String(r.ID), Reason: jsii.String(r.Reason)}
		if len(r.AppliesTo) > 0 {
			applies := r.AppliesTo
			s.AppliesTo = &applies
		}
		list[i] = s
	}
	cdknag.NagSuppressions_AddResourceSuppressions(scope, &list, jsii.Bool(true))
}

// RolePolicy is the CloudFormation policy that grants add to fn's role.
func RolePolicy(fn awslambda.IFunction) constructs.IConstruct {
	return fn.Role().Node().FindChild(jsii.String("DefaultPolicy")).Node().DefaultChild()
}

// ScheduleGroupWildcard matches a "schedules of one group" resource.
var ScheduleGroupWildcard = map[string]string{
	"regex": `/^Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule\/[^/*]+\/\*$/g`,
}

// ExecutionsWildcard matches an "executions of one state machine"
// resource (the Step Functions timer).
var ExecutionsWildcard = map[string]string{
	"regex": `/^Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<[^>]+\.Name>:\*$/g`,
}

// Regex makes an AppliesTo pattern.
func Regex(re string) map[string]string { return map[string]string{"regex": re} }
