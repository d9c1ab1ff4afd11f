package test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/reconciler"
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

func TestReconcilerFunction(t *testing.T) {
	s := Stack(t, "dev")
	fn := Props(s.Resources("AWS::Lambda::Function")[s.LogicalID(t, "AWS::Lambda::Function", "TasksReconcilerFunction")])
	env := fn["Environment"].(map[string]any)["Variables"].(map[string]any)
	t.Run("one run at a time", func(t *testing.T) {
		if fn["ReservedConcurrentExecutions"] != 1.0 {
			t.Fatalf("ReservedConcurrentExecutions = %v, want 1", fn["ReservedConcurrentExecutions"])
		}
	})
	t.Run("timeout leaves the handler's stop margin after the budget", func(t *testing.T) {
		budget, err := strconv.Atoi(env["BUDGET_SEC"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if budget != reconciler.DefaultBudgetSec || fn["Timeout"] != float64(budget+reconciler.TimeoutMarginSec) {
			t.Fatalf("budget %d, timeout %v: want %d and %d", budget, fn["Timeout"], reconciler.DefaultBudgetSec,
				reconciler.DefaultBudgetSec+reconciler.TimeoutMarginSec)
		}
		if fn["Timeout"].(float64) < float64(budget+15) {
			t.Fatalf("timeout %v < budget %d + the handler's 15 s stop margin", fn["Timeout"], budget)
		}
	})
	t.Run("environment the handler reads", func(t *testing.T) {
		for _, k := range []string{"TABLE_NAME", "SCHEDULE_GROUP", "SCHEDULE_TARGET_ARN", "SCHEDULER_ROLE_ARN",
			"SCHEDULER_DLQ_ARN", "FIRE_FUNCTION_ARN", "GRACE_SEC", "RATE_PER_SEC", "BUDGET_SEC"} {
			if env[k] == nil || env[k] == "" {
				t.Errorf("%s missing from %s", k, JSON(env))
			}
		}
		if env["GRACE_SEC"] != "300" || env["RATE_PER_SEC"] != "10" {
			t.Errorf("GRACE_SEC %v, RATE_PER_SEC %v: want the defaults 300 and 10", env["GRACE_SEC"], env["RATE_PER_SEC"])
		}
	})
}

func TestReconcilerRunsOnARateRule(t *testing.T) {
	s := Stack(t, "dev")
	fn := s.LogicalID(t, "AWS::Lambda::Function", "TasksReconcilerFunction")
	ruleID := s.LogicalID(t, "AWS::Events::Rule", "TasksReconcilerSchedule")
	rule := Props(s.Resources("AWS::Events::Rule")[ruleID])
	every := EnvConfig(t, "dev").ReconcileEveryMinutes
	for _, tc := range []struct {
		name string
		got  any
		want any
	}{
		{"rate from cdk.json", rule["ScheduleExpression"], fmt.Sprintf("rate(%d minutes)", every)},
		{"targets the function", JSON(rule["Targets"].([]any)[0].(map[string]any)["Arn"]), JSON(getAtt(fn, "Arn"))},
		{"enabled", rule["State"], "ENABLED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Fatalf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
	t.Run("only the rule may invoke it", func(t *testing.T) {
		var found bool
		for _, p := range s.Resources("AWS::Lambda::Permission") {
			pp := Props(p)
			if JSON(pp["FunctionName"]) != JSON(getAtt(fn, "Arn")) {
				continue
			}
			found = true
			if pp["Principal"] != "events.amazonaws.com" || JSON(pp["SourceArn"]) != JSON(getAtt(ruleID, "Arn")) {
				t.Errorf("permission %s", JSON(pp))
			}
		}
		if !found {
			t.Fatal("no invoke permission for the rule")
		}
	})
	t.Run("no retries; a run queued longer than an interval is dropped", func(t *testing.T) {
		var cfgs []map[string]any
		for _, c := range s.Resources("AWS::Lambda::EventInvokeConfig") {
			if JSON(Props(c)["FunctionName"]) == JSON(ref(fn)) {
				cfgs = append(cfgs, Props(c))
			}
		}
		if len(cfgs) != 1 || cfgs[0]["MaximumRetryAttempts"] != 0.0 || cfgs[0]["MaximumEventAgeInSeconds"] != float64(every*60) {
			t.Fatalf("event invoke config %s", JSON(cfgs))
		}
	})
}

func TestReconcilerLeastPrivilege(t *testing.T) {
	s := Stack(t, "dev")
	sts := s.FunctionStatements(t, "TasksReconcilerFunction")
	group := s.groupSchedules(t)
	table := "${" + s.LogicalID(t, "AWS::DynamoDB::Table", "TasksTable") + ".Arn}"
	pendingIndex := table + "/index/pending"
	schedulerRole := "${" + s.LogicalID(t, "AWS::IAM::Role", "TasksSchedulerRole") + ".Arn}"
	logs := "${" + s.LogicalID(t, "AWS::Logs::LogGroup", "TasksReconcilerFunctionLogs") + ".Arn}"
	fire := "${" + s.LogicalID(t, "AWS::Lambda::Function", "TasksFireFunction") + ".Arn}"
	failures := "${" + s.LogicalID(t, "AWS::SQS::Queue", "TasksReconcilerFailureQueue") + ".Arn}"

	t.Run("schedules inside the group only; ListSchedules is the one action on *", func(t *testing.T) {
		checkSchedulerScope(t, sts, group, true)
	})
	t.Run("exact actions and resources", func(t *testing.T) {
		got := map[string][]string{}
		for _, st := range sts {
			for _, a := range Actions(st) {
				got[a] = append(got[a], resources(st)...)
			}
		}
		want := map[string][]string{
			"dynamodb:GetItem": {table}, "dynamodb:UpdateItem": {table}, "dynamodb:PutItem": {table},
			"dynamodb:Query":           {pendingIndex},
			"scheduler:CreateSchedule": {group}, "scheduler:UpdateSchedule": {group},
			"scheduler:DeleteSchedule": {group}, "scheduler:GetSchedule": {group},
			"scheduler:ListSchedules": {"*"},
			"iam:PassRole":            {schedulerRole},
			// It fires overdue tasks through the firing function, which
			// runs the to-do app's target inside it: that function, its
			// versions and aliases.
			"lambda:InvokeFunction": {fire, fire + ":*"},
			"logs:CreateLogStream":  {logs}, "logs:PutLogEvents": {logs},
			// Lambda sends a given-up run's record to the on-failure queue as
			// the function (SqsDestination's grant).
			"sqs:SendMessage": {failures}, "sqs:GetQueueAttributes": {failures}, "sqs:GetQueueUrl": {failures},
		}
		if JSON(got) != JSON(want) {
			t.Fatalf("reconciler policy\n got %s\nwant %s", JSON(got), JSON(want))
		}
	})
	t.Run("put only the checkpoint item; never scan", func(t *testing.T) {
		for _, st := range sts {
			acts := Actions(st)
			if slices.Contains(acts, "dynamodb:Scan") {
				t.Errorf("reconciler may scan: %s", JSON(st))
			}
			if slices.Contains(acts, "dynamodb:PutItem") && JSON(st["Condition"]) != JSON(map[string]any{
				"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": []any{"#reconciler"}}}) {
				t.Errorf("PutItem not limited to the checkpoint's partition key: %s", JSON(st))
			}
			if slices.Contains(acts, "iam:PassRole") && !strings.Contains(JSON(st["Condition"]), "scheduler.amazonaws.com") {
				t.Errorf("PassRole without the scheduler condition: %s", JSON(st))
			}
		}
	})
}

func TestReconcilerAlarms(t *testing.T) {
	s := Stack(t, "dev")
	topic := JSON([]any{ref(s.LogicalID(t, "AWS::SNS::Topic", "AlarmTopic"))})
	alarm := func(prefix string) map[string]any {
		return Props(s.Resources("AWS::CloudWatch::Alarm")[s.LogicalID(t, "AWS::CloudWatch::Alarm", prefix)])
	}
	t.Run("function errors", func(t *testing.T) {
		a := alarm("TasksReconcilerErrorsAlarm")
		fn := []any{map[string]any{"Name": "FunctionName", "Value": ref(s.LogicalID(t, "AWS::Lambda::Function", "TasksReconcilerFunction"))}}
		if a["MetricName"] != "Errors" || JSON(a["Dimensions"]) != JSON(fn) || a["Threshold"] != 1.0 || JSON(a["AlarmActions"]) != topic {
			t.Fatalf("errors alarm %s", JSON(a))
		}
	})
	// Every other alarm reads one of the reconciler's EMF metrics, with
	// the dimensions it writes, over one interval.
	custom := func(t *testing.T, a map[string]any, name, stat string) {
		t.Helper()
		if a["Namespace"] != metrics.Namespace || a["MetricName"] != name || a["Statistic"] != stat ||
			a["Period"] != float64(EnvConfig(t, "dev").ReconcileEveryMinutes*60) || JSON(a["Dimensions"]) != JSON([]any{
			map[string]any{"Name": metrics.DimensionFunction, "Value": metrics.FunctionReconciler},
			map[string]any{"Name": metrics.DimensionStack, "Value": *s.stack.StackName()}}) ||
			JSON(a["AlarmActions"]) != topic {
			t.Fatalf("alarm on %s: %s", name, JSON(a))
		}
	}
	t.Run("repairs per run above the threshold", func(t *testing.T) {
		a := alarm("TasksReconcilerRepairsAlarm")
		custom(t, a, metrics.Repaired, "Sum")
		if a["Threshold"] != float64(reconciler.DefaultRepairAlarmThreshold) || a["ComparisonOperator"] != "GreaterThanThreshold" {
			t.Fatalf("repairs alarm %s", JSON(a))
		}
	})
	t.Run("a run that leaves work over", func(t *testing.T) {
		a := alarm("TasksReconcilerLeftOverAlarm")
		custom(t, a, metrics.LeftOver, "Maximum")
		if a["Threshold"] != 1.0 || a["ComparisonOperator"] != "GreaterThanOrEqualToThreshold" ||
			a["EvaluationPeriods"] != 1.0 || a["TreatMissingData"] != "notBreaching" {
			t.Fatalf("left-over alarm %s", JSON(a))
		}
	})
	t.Run("no pass completed in two intervals, a silent function included", func(t *testing.T) {
		a := alarm("TasksReconcilerStalledAlarm")
		custom(t, a, metrics.PassesCompleted, "Sum")
		if a["Threshold"] != 1.0 || a["ComparisonOperator"] != "LessThanThreshold" || a["EvaluationPeriods"] != 2.0 ||
			a["DatapointsToAlarm"] != 2.0 || a["TreatMissingData"] != "breaching" {
			t.Fatalf("stalled alarm %s", JSON(a))
		}
	})
}

// fakeCore stands in for the ScheduleOnWrite the reconciler fires through.
type fakeCore struct{}

func (fakeCore) GrantFire(fn awslambda.IFunction) awsiam.Grant {
	return awsiam.Grant_Drop(fn, jsii.String("fire"))
}
func (fakeCore) FiringEnvironment() map[string]string {
	return map[string]string{"TARGET_FUNCTION_ARN": "arn:aws:lambda:eu-west-1:111111111111:function:notify", "FIRE_LEASE_SECONDS": "60"}
}

func TestReconcilerShortIntervalHalvesTheBudget(t *testing.T) {
	stack := customStack(t, "Short")
	table := awsdynamodb.Table_FromTableName(stack, jsii.String("Imported"), jsii.String("things"))
	var r *reconciler.Reconciler
	Check(t, func() {
		r = reconciler.NewReconciler(stack, jsii.String("Reconciler"), &reconciler.ReconcilerProps{
			Table: table, Timer: fakeSchedules{}, Core: fakeCore{}, Every: awscdk.Duration_Minutes(jsii.Number(5)),
		})
	})
	s := synthOf(t, stack)
	fn := Props(s.Resources("AWS::Lambda::Function")[*stack.GetLogicalId(r.Function.Function.Node().DefaultChild().(awscdk.CfnElement))])
	env := fn["Environment"].(map[string]any)["Variables"].(map[string]any)
	rule := Props(s.Resources("AWS::Events::Rule")[*stack.GetLogicalId(r.Rule.Node().DefaultChild().(awscdk.CfnElement))])
	if env["BUDGET_SEC"] != "150" || fn["Timeout"] != 210.0 || rule["ScheduleExpression"] != "rate(5 minutes)" {
		t.Fatalf("budget %v, timeout %v, schedule %v: want 150, 210, rate(5 minutes)", env["BUDGET_SEC"], fn["Timeout"], rule["ScheduleExpression"])
	}
}

// TestReconcilerOnAnExistingFunction: with an adopter's own function the
// construct adds what every reconciler reads (the table, schema, timer and
// firing environment), its failure queue, rule and Errors alarm, under
// IdPrefix; nothing of the core's entry: no Grace/Rate/Budget, no reserved
// concurrency, no checkpoint grant or Scan, no alarms on its metrics.
func TestReconcilerOnAnExistingFunction(t *testing.T) {
	stack := customStack(t, "Own")
	table := awsdynamodb.Table_FromTableName(stack, jsii.String("Imported"), jsii.String("things"))
	var r *reconciler.Reconciler
	var own *gofn.Function
	Check(t, func() {
		own = gofn.NewFunction(stack, jsii.String("Reconciler"), &gofn.FunctionProps{Entry: "lambdas/reconciler",
			Environment: map[string]string{"MINE": "kept"}})
		r = reconciler.NewReconciler(stack, jsii.String("Default"), &reconciler.ReconcilerProps{
			Table: table, Timer: fakeSchedules{}, Core: fakeCore{}, ExistingFunction: own, IdPrefix: "Reconciler",
		})
	})
	s := synthOf(t, stack)
	if r.Function != own {
		t.Fatal("Function is not the ExistingFunction")
	}
	fnID := *stack.GetLogicalId(own.Function.Node().DefaultChild().(awscdk.CfnElement))
	fn := Props(s.Resources("AWS::Lambda::Function")[fnID])
	env := fn["Environment"].(map[string]any)["Variables"].(map[string]any)
	for _, k := range []string{"MINE", "TABLE_NAME", "UNSCHEDULE_ITEM_SCHEMA", "SCHEDULE_GROUP", "TARGET_FUNCTION_ARN", "FIRE_LEASE_SECONDS"} {
		if env[k] == nil {
			t.Errorf("%s missing from %s", k, JSON(env))
		}
	}
	for _, k := range []string{"GRACE_SEC", "RATE_PER_SEC", "BUDGET_SEC"} {
		if env[k] != nil {
			t.Errorf("%s set: the core entry's configuration, not this function's", k)
		}
	}
	if fn["ReservedConcurrentExecutions"] != nil {
		t.Errorf("ReservedConcurrentExecutions %v: the adopter's to choose", fn["ReservedConcurrentExecutions"])
	}
	if len(s.Resources("AWS::Lambda::Function")) != 1 {
		t.Errorf("%d functions, want only the existing one", len(s.Resources("AWS::Lambda::Function")))
	}
	// "Default" is left out of logical ids: the ids are those of
	// resources built beside the function under the prefixed names.
	for _, x := range []struct {
		typ, prefix string
		node        awscdk.Resource
	}{{"AWS::Events::Rule", "ReconcilerSchedule", r.Rule}, {"AWS::SQS::Queue", "ReconcilerFailureQueue", r.FailureQueue.(awscdk.Resource)},
		{"AWS::CloudWatch::Alarm", "ReconcilerErrorsAlarm", r.ErrorsAlarm}} {
		id := *stack.GetLogicalId(x.node.Node().DefaultChild().(awscdk.CfnElement))
		if !strings.HasPrefix(id, x.prefix) || s.Resources(x.typ)[id] == nil {
			t.Errorf("%s logical id %s, want %s…", x.typ, id, x.prefix)
		}
	}
	if got := len(r.Alarms()); got != 4 || r.RepairsAlarm != nil || r.StalledAlarm != nil || len(r.ErrorAlarms()) != 0 {
		t.Errorf("%d alarms (RepairsAlarm %v, StalledAlarm %v, ErrorAlarms %d): want Errors and the three of the failure queue only",
			got, r.RepairsAlarm, r.StalledAlarm, len(r.ErrorAlarms()))
	}
	for _, forbidden := range []string{"dynamodb:Scan", "dynamodb:PutItem"} {
		if strings.Contains(JSON(s.Resources("AWS::IAM::Policy")), forbidden) {
			t.Errorf("a policy allows %s: the core entry's table grants are the adopter's", forbidden)
		}
	}
}

func TestReconcilerValidation(t *testing.T) {
	app := NewApp(t, nil)
	stack := awscdk.NewStack(app, jsii.String("Validation"), nil)
	table := awsdynamodb.Table_FromTableName(stack, jsii.String("Imported"), jsii.String("things"))
	noIndex := awsdynamodb.NewTable(stack, jsii.String("NoIndex"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("userId"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:      &awsdynamodb.Attribute{Name: jsii.String("taskId"), Type: awsdynamodb.AttributeType_STRING},
		Stream:       awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
	})
	queue := awssqs.Queue_FromQueueArn(stack, jsii.String("Failures"), jsii.String("arn:aws:sqs:eu-west-1:111111111111:failures"))
	var own *gofn.Function
	Check(t, func() { // in a stack of its own, not bundled: validation refuses it first
		own = gofn.NewFunction(customStack(t, "OwnFunction"), jsii.String("Own"), &gofn.FunctionProps{Entry: "lambdas/reconciler"})
	})
	minutes := func(n float64) awscdk.Duration { return awscdk.Duration_Minutes(jsii.Number(n)) }
	seconds := func(n float64) awscdk.Duration { return awscdk.Duration_Seconds(jsii.Number(n)) }
	type props = reconciler.ReconcilerProps
	valid := func(edit func(p *props)) *props {
		p := &props{Table: table, Timer: fakeSchedules{}, Core: fakeCore{}}
		edit(p)
		return p
	}
	for i, tc := range []struct {
		name  string
		props *props
		want  []string
	}{
		{"no props", nil, []string{"props are required"}},
		{"no table", valid(func(p *props) { p.Table = nil }), []string{"Table is required"}},
		{"no timer", valid(func(p *props) { p.Timer = nil }), []string{"Timer is required"}},
		{"no core", valid(func(p *props) { p.Core = nil }), []string{"Core is required"}},
		{"an armed index the table lacks", valid(func(p *props) {
			p.ArmedIndex, p.Schema, p.Table = &reconciler.ArmedIndex{}, contract.Schema{PartitionKey: "userId", SortKey: "taskId"}, noIndex
		}), []string{`has no global secondary index "armed"`, "scheduleonwrite.AddArmedIndex", "leave ArmedIndex unset"}},
		{"a sharded armed index without its shards", valid(func(p *props) {
			p.ArmedIndex, p.Schema = &reconciler.ArmedIndex{Name: "open", PartitionAttr: "shard"}, contract.Schema{PartitionKey: "tenantId"}
		}), []string{`ArmedIndex: armed index "open": Partitions needs 1 to 100 values of shard (given 0)`}},
		{"an armed index keyed by the due attribute", valid(func(p *props) {
			p.ArmedIndex, p.Schema = &reconciler.ArmedIndex{PartitionAttr: "runAt", Partitions: []string{"x"}},
				contract.Schema{PartitionKey: "tenantId", DueAttr: "runAt"}
		}), []string{`PartitionAttr "runAt" is a key or the due attribute`}},
		{"interval above a day", valid(func(p *props) { p.Every = minutes(1441) }),
			[]string{"Every must be a whole number between 1 and 1440 inclusive (given 1441)"}},
		{"interval not whole minutes", valid(func(p *props) { p.Every = seconds(90) }),
			[]string{"Every must be a whole number of minutes (given 90 s)"}},
		{"budget beyond Lambda's timeout", valid(func(p *props) { p.Budget = seconds(841) }),
			[]string{"Budget must be a whole number of seconds between 10 and 840", "(given 14 minutes 1 second)"}},
		{"budget as long as the interval", valid(func(p *props) { p.Every = minutes(2); p.Budget = seconds(120) }),
			[]string{"Budget (given 120 s) must be shorter than the interval", "lower Budget or raise Every"}},
		{"negative rate", valid(func(p *props) { p.RatePerSec = -1 }),
			[]string{"RatePerSec must be above 0", "(given -1)"}},
		{"zero grace", valid(func(p *props) { p.Grace = seconds(0) }),
			[]string{"Grace must be a whole number of seconds", "(given 0 seconds)"}},
		{"more async retries than Lambda allows", valid(func(p *props) { p.AsyncRetryAttempts = jsii.Number(3) }),
			[]string{"AsyncRetryAttempts must be a whole number between 0 and 2 inclusive (given 3)"}},
		{"event age below Lambda's minimum", valid(func(p *props) { p.AsyncMaxEventAge = seconds(30) }),
			[]string{"AsyncMaxEventAge must be a whole number between 60 and 21600 inclusive (given 30)"}},
		{"existing failure queue and its props", valid(func(p *props) { p.ExistingFailureQueue = queue; p.FailureQueueProps = &awssqs.QueueProps{} }),
			[]string{"ExistingFailureQueue and FailureQueueProps are both set"}},
		{"the core entry's budget on an existing function", valid(func(p *props) { p.ExistingFunction = own; p.Budget = seconds(60) }),
			[]string{"Budget configures the core's reconciler function, and ExistingFunction is set", "configure your own function instead"}},
		{"the core entry's armed index on an existing function", valid(func(p *props) { p.ExistingFunction = own; p.ArmedIndex = &reconciler.ArmedIndex{} }),
			[]string{"ArmedIndex configures the core's reconciler function"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			WantPanic(t, func() { reconciler.NewReconciler(stack, jsii.String(fmt.Sprint("R", i)), tc.props) }, tc.want...)
		})
	}
}
