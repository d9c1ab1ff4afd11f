package todoapp

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// TestLegacyLogicalIDIsWhatCDKGave: the id NewTaskTable pins is the one
// CDK allocates to a table at Tasks/Table (where the core created it), so
// a deployed table is kept.
func TestLegacyLogicalIDIsWhatCDKGave(t *testing.T) {
	stack := awscdk.NewStack(awscdk.NewApp(nil), jsii.String("S"), nil)
	for _, path := range [][]string{{"Tasks", "Table"}, {"Jobs", "Own-Table_1"}} {
		table := awsdynamodb.NewTable(constructs.NewConstruct(stack, jsii.String(path[0])), jsii.String(path[1]), &awsdynamodb.TableProps{
			PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("k"), Type: awsdynamodb.AttributeType_STRING},
		})
		got := *stack.GetLogicalId(table.Node().DefaultChild().(awscdk.CfnElement))
		if want := cdkLogicalID(path[0], path[1], "Resource"); got != want {
			t.Errorf("CDK gave %s at %v, cdkLogicalID says %s", got, path, want)
		}
	}
}
