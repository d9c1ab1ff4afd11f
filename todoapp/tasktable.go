package todoapp

import (
	"crypto/md5"
	"encoding/hex"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/reconciler"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
)

// TaskTableProps configures the to-do table.
type TaskTableProps struct {
	// RemovalPolicy of the table.
	// Default: RETAIN.
	RemovalPolicy awscdk.RemovalPolicy
	// DeletionProtection of the table.
	// Default: false.
	DeletionProtection bool
	// LegacyLogicalID gives the table the logical id it had when the
	// schedule-on-write construct "Tasks" created it (Tasks/Table), so a
	// deployed table is kept rather than replaced. Only one table of a
	// stack may set it.
	// Default: false (the id CDK derives from the table's path).
	LegacyLogicalID bool
}

// NewTaskTable is the to-do app's table: the schedule-on-write table of
// tableschema.Todo() (scheduleonwrite.TableProps) with the app's indexes:
// pending (a GSI), which the reconciler queries, and userPending (an LSI),
// which the API counts for the per-user cap (see tableschema). Pass it as
// ScheduleOnWriteProps.ExistingTable with Schema tableschema.Todo().
func NewTaskTable(scope constructs.Construct, id string, props *TaskTableProps) awsdynamodb.Table {
	var p TaskTableProps
	if props != nil {
		p = *props
	}
	if p.RemovalPolicy == "" {
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	table := awsdynamodb.NewTable(scope, jsii.String(id), scheduleonwrite.TableProps(tableschema.Todo(), p.RemovalPolicy, p.DeletionProtection))
	table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String(tableschema.PendingIndex),
		PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(tableschema.PendingShardAttr), Type: awsdynamodb.AttributeType_STRING},
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String(tableschema.PendingSortAttr), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_ALL,
	})
	table.AddLocalSecondaryIndex(&awsdynamodb.LocalSecondaryIndexProps{
		IndexName:      jsii.String(tableschema.UserPendingIndex),
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String(tableschema.UserPendingAttr), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_KEYS_ONLY,
	})
	if p.LegacyLogicalID {
		table.Node().DefaultChild().(awsdynamodb.CfnTable).OverrideLogicalId(jsii.String(cdkLogicalID("Tasks", "Table", "Resource")))
	}
	return table
}

// cdkLogicalID is the logical id CDK allocates to a resource at path
// (relative to its stack, more than one component, no "Default"): the
// components without "Resource" and non-alphanumerics, then the first 8
// hex digits of the MD5 of the path, upper case (aws-cdk-lib's
// makeUniqueId).
func cdkLogicalID(path ...string) string {
	sum := md5.Sum([]byte(strings.Join(path, "/")))
	var human strings.Builder
	for _, c := range path {
		if c == "Resource" {
			continue
		}
		for _, r := range c {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				human.WriteRune(r)
			}
		}
	}
	return human.String() + strings.ToUpper(hex.EncodeToString(sum[:])[:8])
}

// pendingArmedIndex is the pending index as the reconciler's armed index
// (tableschema.PendingArmedIndex).
func pendingArmedIndex() *reconciler.ArmedIndex {
	x := tableschema.PendingArmedIndex()
	return &x
}
