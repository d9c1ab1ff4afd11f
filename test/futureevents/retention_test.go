package futureevents_test

import (
	"fmt"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	dj "github.com/unschedule/unschedule/constructs/deferredjobs"
	"github.com/unschedule/unschedule/constructs/gofn"
)

// TestDeferredJobsTableIsKept: the marker table (the next window's pending
// work) has point-in-time recovery, and is retained unless the adopter
// passes DESTROY, as the task table.
func TestDeferredJobsTableIsKept(t *testing.T) {
	for i, tc := range []struct {
		removal awscdk.RemovalPolicy
		want    string
	}{{"", "Retain"}, {awscdk.RemovalPolicy_RETAIN, "Retain"}, {awscdk.RemovalPolicy_DESTROY, "Delete"}} {
		t.Run(fmt.Sprint(tc.removal, "->", tc.want), func(t *testing.T) {
			st := awscdk.NewStack(newApp(t), jsii.String(fmt.Sprint("Kept", i)), nil)
			w := gofn.NewFunction(st, jsii.String("W"), &gofn.FunctionProps{Entry: "examples/barbershop/worker"})
			dj.NewDeferredJobs(st, jsii.String("DJ"), &dj.DeferredJobsProps{Worker: w.Function, RemovalPolicy: tc.removal})
			_, j := synth(st)
			_, table := j.one(t, "AWS::DynamoDB::Table", "DJ")
			if got := js(props(table)["PointInTimeRecoverySpecification"]); got != `{"PointInTimeRecoveryEnabled":true}` {
				t.Errorf("point-in-time recovery %s", got)
			}
			if table["DeletionPolicy"] != tc.want || table["UpdateReplacePolicy"] != tc.want {
				t.Errorf("table deletion %v, replace %v, want %s", table["DeletionPolicy"], table["UpdateReplacePolicy"], tc.want)
			}
		})
	}
}
