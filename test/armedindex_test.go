package test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/envvars"
)

// A table the core creates for an adopter's schema gets the state-keyed
// armed index, and its reconciler Queries that index and never scans.
func TestArmedIndexOfANewTable(t *testing.T) {
	stack := customStack(t, "Armed")
	var s *scheduleonwrite.ScheduleOnWrite
	Check(t, func() {
		s = scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Jobs"), &scheduleonwrite.ScheduleOnWriteProps{
			Schema: jobsSchema,
			Target: awslambda.Function_FromFunctionArn(stack, jsii.String("Target"), jsii.String("arn:aws:lambda:eu-west-1:111111111111:function:run")),
		})
	})
	syn := synthOf(t, stack)
	table := *stack.GetLogicalId(s.Table.Node().DefaultChild().(awscdk.CfnElement))
	p := Props(syn.Resources("AWS::DynamoDB::Table")[table])
	gsis, _ := p["GlobalSecondaryIndexes"].([]any)
	if len(gsis) != 1 {
		t.Fatalf("indexes %s, want the armed index", JSON(p["GlobalSecondaryIndexes"]))
	}
	gsi := gsis[0].(map[string]any)
	keys, _ := json.Marshal(gsi["KeySchema"])
	if gsi["IndexName"] != armedindex.DefaultName ||
		string(keys) != `[{"AttributeName":"status","KeyType":"HASH"},{"AttributeName":"runAt","KeyType":"RANGE"}]` {
		t.Fatalf("armed index %s, want status and runAt", JSON(gsi))
	}
	proj := gsi["Projection"].(map[string]any)
	if proj["ProjectionType"] != "INCLUDE" || !strings.Contains(JSON(proj["NonKeyAttributes"]), `"deliveredAt"`) {
		t.Errorf("projection %s, want INCLUDE of the contract's attributes", JSON(proj))
	}
	fn := *stack.GetLogicalId(s.Reconciler.Function.Function.Node().DefaultChild().(awscdk.CfnElement))
	env := Props(syn.Resources("AWS::Lambda::Function")[fn])["Environment"].(map[string]any)["Variables"].(map[string]any)
	spec, ok, err := armedindex.Parse(env[envvars.ArmedIndex].(string), jobsSchema.WithDefaults())
	if err != nil || !ok || spec.Name != armedindex.DefaultName || spec.PartitionAttr != "status" {
		t.Fatalf("reconciler's %s = %v (%v): want the armed index", envvars.ArmedIndex, env[envvars.ArmedIndex], err)
	}
	acts := ActionMap(syn.FunctionStatements(t, fn))
	if acts["dynamodb:Scan"] != "" || !strings.Contains(acts["dynamodb:Query"], "/index/"+armedindex.DefaultName) {
		t.Errorf("reconciler may Scan (%q) or not Query the index (%q)", acts["dynamodb:Scan"], acts["dynamodb:Query"])
	}
}

// On the TTL timer, the watch and the reconciler list the markers from
// the armed index's marker partition: the watch Queries the index and
// never scans the table.
func TestArmedIndexListsTheTTLMarkers(t *testing.T) {
	s, _ := timerStack(t, "LayerTTL", func(p *scheduleonwrite.ScheduleOnWriteProps) {
		p.Timer = scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{
			MaxLateness:  awscdk.Duration_Days(jsii.Number(3)),
			TTLBatchSize: jsii.Number(50), TTLParallelizationFactor: jsii.Number(4), TTLMaxConcurrency: jsii.Number(8),
		})
	})
	for _, id := range []string{"JobsTTLWatch", "JobsReconcilerFunction"} {
		fn := s.LogicalID(t, "AWS::Lambda::Function", id)
		env := Props(s.Resources("AWS::Lambda::Function")[fn])["Environment"].(map[string]any)["Variables"].(map[string]any)
		v, _ := env[envvars.ArmedIndex].(string)
		if spec, ok, err := armedindex.Parse(v, jobsSchema.WithDefaults()); err != nil || !ok || !spec.StateKeyed(jobsSchema.WithDefaults()) {
			t.Errorf("%s: %s = %q (%v), want the state-keyed armed index", id, envvars.ArmedIndex, v, err)
		}
		acts := ActionMap(s.FunctionStatements(t, fn))
		if !strings.Contains(acts["dynamodb:Query"], "/index/"+armedindex.DefaultName) {
			t.Errorf("%s may not Query the armed index: %s", id, JSON(acts))
		}
		if id == "JobsTTLWatch" && acts["dynamodb:Scan"] != "" {
			t.Errorf("the TTL watch may scan the table: %s", acts["dynamodb:Scan"])
		}
	}
}
