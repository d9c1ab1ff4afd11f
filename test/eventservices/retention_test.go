package eventservices

import (
	"fmt"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	dj "github.com/unschedule/unschedule/constructs/deferredjobs"
	fe "github.com/unschedule/unschedule/constructs/futureevents"
	"github.com/unschedule/unschedule/constructs/gofn"
)

// TestDeferredJobsTableIsKept: the items table (every tenant's pending
// job) has point-in-time recovery whatever the props, and is retained and
// protected from deletion unless the adopter passes DESTROY, as the task
// table (todoapp: removalPolicy "retain" by default, Protected). One
// stack holds every case, so it synthesizes once.
func TestDeferredJobsTableIsKept(t *testing.T) {
	cases := []struct {
		removal    awscdk.RemovalPolicy
		protect    *bool
		tableProps *awsdynamodb.TableProps
		want       string
		protected  bool
	}{
		{"", nil, nil, "Retain", true},
		{awscdk.RemovalPolicy_RETAIN, nil, nil, "Retain", true},
		{awscdk.RemovalPolicy_RETAIN, jsii.Bool(false), nil, "Retain", false},
		{awscdk.RemovalPolicy_DESTROY, nil, nil, "Delete", false},
		{awscdk.RemovalPolicy_DESTROY, jsii.Bool(true), nil, "Delete", true},
		// An override of another field keeps point-in-time recovery.
		{"", nil, &awsdynamodb.TableProps{TableClass: awsdynamodb.TableClass_STANDARD_INFREQUENT_ACCESS}, "Retain", true},
	}
	st := awscdk.NewStack(newApp(t), jsii.String("Kept"), nil)
	w := gofn.NewFunction(st, jsii.String("W"), &gofn.FunctionProps{Entry: "examples/barbershop/worker"})
	for i, tc := range cases {
		dj.NewDeferredJobs(st, jsii.String(fmt.Sprint("DJ", i, "x")), &dj.DeferredJobsProps{Worker: w.Function,
			RemovalPolicy: tc.removal, DeletionProtection: tc.protect, TableProps: tc.tableProps})
	}
	_, j := synth(st)
	for i, tc := range cases {
		t.Run(fmt.Sprint(tc.removal, " protect=", tc.protect != nil && *tc.protect, " -> ", tc.want), func(t *testing.T) {
			_, table := j.one(t, "AWS::DynamoDB::Table", fmt.Sprint("DJ", i, "x"))
			if got := js(props(table)["PointInTimeRecoverySpecification"]); got != `{"PointInTimeRecoveryEnabled":true}` {
				t.Errorf("point-in-time recovery %s", got)
			}
			if table["DeletionPolicy"] != tc.want || table["UpdateReplacePolicy"] != tc.want {
				t.Errorf("table deletion %v, replace %v, want %s", table["DeletionPolicy"], table["UpdateReplacePolicy"], tc.want)
			}
			if got := props(table)["DeletionProtectionEnabled"] == true; got != tc.protected {
				t.Errorf("deletion protection %v, want %v", props(table)["DeletionProtectionEnabled"], tc.protected)
			}
			_, q := j.one(t, "AWS::SQS::Queue", fmt.Sprint("DJ", i, "xJobQueue"))
			if q["DeletionPolicy"] != tc.want {
				t.Errorf("job queue deletion %v, want %s", q["DeletionPolicy"], tc.want)
			}
		})
	}
}

// TestFutureEventsTableIsKept: the events table follows the same rule as
// the deferred jobs' (resource.Protected): retained and protected from
// deletion by default, neither with DESTROY, DeletionProtection and
// TableProps overriding. One stack holds every case.
func TestFutureEventsTableIsKept(t *testing.T) {
	cases := []struct {
		removal    awscdk.RemovalPolicy
		protect    *bool
		tableProps *awsdynamodb.TableProps
		want       string
		protected  bool
	}{
		{"", nil, nil, "Retain", true},
		{awscdk.RemovalPolicy_RETAIN, jsii.Bool(false), nil, "Retain", false},
		{awscdk.RemovalPolicy_DESTROY, nil, nil, "Delete", false},
		{awscdk.RemovalPolicy_DESTROY, jsii.Bool(true), nil, "Delete", true},
		// TableProps merge over the defaults, field by field.
		{"", nil, &awsdynamodb.TableProps{DeletionProtection: jsii.Bool(false)}, "Retain", false},
	}
	st := awscdk.NewStack(newApp(t), jsii.String("FEKept"), nil)
	for i, tc := range cases {
		fe.NewFutureEvents(st, jsii.String(fmt.Sprint("FE", i, "x")), &fe.FutureEventsProps{
			RemovalPolicy: tc.removal, DeletionProtection: tc.protect, TableProps: tc.tableProps})
	}
	_, j := synth(st)
	for i, tc := range cases {
		t.Run(fmt.Sprint(tc.removal, " protect=", tc.protect != nil && *tc.protect, " -> ", tc.want), func(t *testing.T) {
			_, table := j.one(t, "AWS::DynamoDB::Table", fmt.Sprint("FE", i, "x"))
			if table["DeletionPolicy"] != tc.want || table["UpdateReplacePolicy"] != tc.want {
				t.Errorf("table deletion %v, replace %v, want %s", table["DeletionPolicy"], table["UpdateReplacePolicy"], tc.want)
			}
			if got := props(table)["DeletionProtectionEnabled"] == true; got != tc.protected {
				t.Errorf("deletion protection %v, want %v", props(table)["DeletionProtectionEnabled"], tc.protected)
			}
		})
	}
}
