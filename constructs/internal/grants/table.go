package grants

// Table, index and invoke grants: least privilege, with the table's
// customer-managed KMS key when it has one.

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// Table grants actions on the table itself only (not its indexes), which
// is tighter than ITable.Grant, plus what the table's customer-managed
// key needs for them (Decrypt, and Encrypt/GenerateDataKey for writes).
func Table(table awsdynamodb.ITable, grantee awsiam.IGrantable, actions ...string) awsiam.Grant {
	g := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings(actions...), ResourceArns: &[]*string{table.TableArn()},
	})
	key(table, grantee, actions)
	return g
}

// TablePartitions grants actions on the table's items whose partition key
// is one of partitions only (the dynamodb:LeadingKeys condition), with
// the table's customer-managed key: a writer that owns a few partitions
// of a shared table, such as the campaign suppression list's.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/specifying-conditions.html
func TablePartitions(table awsdynamodb.ITable, grantee awsiam.IGrantable, partitions []string, actions ...string) awsiam.Grant {
	g := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings(actions...), ResourceArns: &[]*string{table.TableArn()},
		Conditions: &map[string]*map[string]any{
			"ForAllValues:StringEquals": {"dynamodb:LeadingKeys": partitions},
		},
	})
	key(table, grantee, actions)
	return g
}

// Index grants actions (Query) on one index of the table, with its key.
func Index(table awsdynamodb.ITable, index string, grantee awsiam.IGrantable, actions ...string) awsiam.Grant {
	g := awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings(actions...), ResourceArns: jsii.Strings(*table.TableArn() + "/index/" + index),
	})
	key(table, grantee, actions)
	return g
}

// writes are the table actions that encrypt.
var writes = map[string]bool{
	"dynamodb:PutItem": true, "dynamodb:UpdateItem": true, "dynamodb:BatchWriteItem": true, "dynamodb:TransactWriteItems": true,
}

// key grants the table's customer-managed key (nil for AWS-owned or
// AWS-managed encryption, which need no grant): Decrypt for every access,
// encrypt too for writes.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/encryption.usagenotes.html
func key(table awsdynamodb.ITable, grantee awsiam.IGrantable, actions []string) {
	k := table.EncryptionKey()
	if k == nil {
		return
	}
	for _, a := range actions {
		if writes[a] {
			k.GrantEncryptDecrypt(grantee)
			return
		}
	}
	k.GrantDecrypt(grantee)
}

// Invoke lets grantee invoke fn (and its versions and aliases) and
// nothing else, through grantee's own policy: unlike IFunction.GrantInvoke
// it never touches the function's resource policy, so it works for a
// function imported by ARN. A function in another account must also
// allow grantee in its own resource policy.
func Invoke(fn awslambda.IFunction, grantee awsiam.IGrantable) awsiam.Grant {
	return awsiam.Grant_AddToPrincipal(&awsiam.GrantOnPrincipalOptions{
		Grantee: grantee, Actions: jsii.Strings("lambda:InvokeFunction"),
		ResourceArns: jsii.Strings(*fn.FunctionArn(), *fn.FunctionArn()+":*"),
	})
}
