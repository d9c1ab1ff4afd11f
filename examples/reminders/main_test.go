package main

import (
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// TestExampleSynthesizes proves the README's reuse example builds: the
// reused constructs synthesize outside the flagship stack, bundling their
// functions from this module.
func TestExampleSynthesizes(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("%v", r)
		}
	}()
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir())})
	tpl := assertions.Template_FromStack(NewRemindersStack(app, "Reminders"), nil)
	tpl.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(1))
	tpl.ResourceCountIs(jsii.String("AWS::Scheduler::ScheduleGroup"), jsii.Number(1))
	tpl.HasResourceProperties(jsii.String("AWS::SQS::Queue"), map[string]any{"FifoQueue": true, "ContentBasedDeduplication": false})
	tpl.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
		"FunctionResponseTypes":      []any{"ReportBatchItemFailures"},
		"BisectBatchOnFunctionError": true,
	})
	// API, stream processor, worker, reconciler, expiry, triggers: every
	// function is a Go bootstrap on arm64.
	fns := (*tpl.ToJSON())["Resources"].(map[string]any)
	n := 0
	for _, r := range fns {
		res := r.(map[string]any)
		if res["Type"] == "AWS::Lambda::Function" {
			n++
			if p := res["Properties"].(map[string]any); p["Handler"] != "bootstrap" {
				t.Fatalf("function handler %v", p["Handler"])
			}
		}
	}
	if n != 6 {
		t.Fatalf("%d functions, want 6 (presignup, postauth, expiry, processor, worker, reconciler)", n)
	}
}
