package test

import (
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/operations"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/todo/todometrics"
	"maps"
)

// TestEveryFailurePathAlarms: every function alarms on errors and
// throttles (its own construct's alarm or the operations one), every queue
// that can hold a given-up message alarms, the scheduler's failures alarm,
// and every alarm notifies the alarm topic.
func TestEveryFailurePathAlarms(t *testing.T) {
	s := Stack(t, "dev")
	topic := s.LogicalID(t, "AWS::SNS::Topic", "AlarmTopic")
	watched := map[string]map[string]bool{} // metric name -> dimension values
	for id, a := range s.Resources("AWS::CloudWatch::Alarm") {
		p := Props(a)
		if !strings.Contains(JSON(p["AlarmActions"]), `"Ref": "`+topic+`"`) {
			t.Errorf("alarm %s does not notify the alarm topic: %s", id, JSON(p["AlarmActions"]))
		}
		name, _ := p["MetricName"].(string)
		if name == "" { // metric-math alarms (the reconciler's repairs)
			name = "math:" + id
		}
		if watched[name] == nil {
			watched[name] = map[string]bool{}
		}
		for _, d := range asList(p["Dimensions"]) {
			watched[name][JSON(d.(map[string]any)["Value"])] = true
		}
	}
	fnRef := func(id string) string { return JSON(map[string]any{"Ref": id}) }
	for id := range s.Resources("AWS::Lambda::Function") {
		if strings.HasPrefix(id, "CustomCDKBucketDeployment") || strings.HasPrefix(id, "AWS679f53fac002430cb0da5b7982bd2287") {
			continue // CDK's deploy-time helpers
		}
		for _, m := range []string{"Errors", "Throttles"} {
			if !watched[m][fnRef(id)] {
				t.Errorf("function %s has no %s alarm", id, m)
			}
		}
	}
	for _, q := range []string{"TasksScheduleDeadLetterQueue", "CancellationDeadLetterQueue", "CancellationStreamFailureQueue",
		"TasksExpiryFailureQueue", "TasksReconcilerFailureQueue"} {
		qid := s.LogicalID(t, "AWS::SQS::Queue", q)
		if !watched["ApproximateNumberOfMessagesVisible"][JSON(map[string]any{"Fn::GetAtt": []any{qid, "QueueName"}})] {
			t.Errorf("queue %s has no alarm", q)
		}
	}
	var names []string
	for n := range watched {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, m := range []string{"IteratorAge", "TargetErrorCount", "InvocationDroppedCount", "InvocationsFailedToBeSentToDeadLetterCount", "FilterPolicyLimitExceeded", "NotificationSubscribeErrors"} {
		if watched[m] == nil {
			t.Errorf("no alarm on %s (alarmed metrics: %v)", m, names)
		}
	}
	dash := s.Resources("AWS::CloudWatch::Dashboard")
	if len(dash) != 1 {
		t.Fatalf("%d dashboards", len(dash))
	}
	for _, body := range dash {
		b := JSON(Props(body)["DashboardBody"])
		for _, want := range []string{"TasksCreated", "ItemsFired", "Cancelled", "DeliveryLagSeconds", "ApproximateNumberOfMessagesVisible"} {
			if !strings.Contains(b, want) {
				t.Errorf("dashboard lacks %s", want)
			}
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// TestCustomMetricsAreDimensionedByStack: every function is told its
// stack's name (METRICS_STACK, read by internal/core/metrics), and every alarm
// and dashboard metric in the project's namespace matches on exactly the
// dimensions the functions emit, Stack and Function, so dev and prod in one
// account never share an alarm.
func TestCustomMetricsAreDimensionedByStack(t *testing.T) {
	s := Stack(t, "dev")
	stackName := JSON(*s.stack.StackName())
	for id, fn := range s.Resources("AWS::Lambda::Function") {
		if strings.HasPrefix(id, "CustomCDKBucketDeployment") || strings.HasPrefix(id, "AWS679f53fac002430cb0da5b7982bd2287") {
			continue // CDK's deploy-time helpers
		}
		vars := JSON(Props(fn)["Environment"])
		if !strings.Contains(vars, `"`+envvars.MetricsStack+`": `+stackName) {
			t.Errorf("function %s lacks %s = the stack name: %s", id, envvars.MetricsStack, vars)
		}
	}
	emitted := map[string]bool{}
	for _, f := range []string{todometrics.FunctionAPI, metrics.FunctionExpiry, metrics.FunctionStreamProcessor,
		metrics.FunctionCancelWorker, metrics.FunctionReconciler, todometrics.FunctionPostAuth} {
		emitted[f] = true
	}
	var found int
	check := func(where string, m map[string]any) {
		if m["Namespace"] != metrics.Namespace {
			return
		}
		found++
		dims := map[string]string{}
		for _, d := range asList(m["Dimensions"]) {
			dims[d.(map[string]any)["Name"].(string)] = JSON(d.(map[string]any)["Value"])
		}
		fn := strings.Trim(dims[metrics.DimensionFunction], `"`)
		if len(dims) != 2 || dims[metrics.DimensionStack] != stackName || !emitted[fn] {
			t.Errorf("%s: metric %v has dimensions %v, want exactly Stack = the stack name and Function = one of the functions", where, m["MetricName"], dims)
		}
	}
	for id, a := range s.Resources("AWS::CloudWatch::Alarm") {
		p := Props(a)
		check(id, p)
		for _, q := range asList(p["Metrics"]) {
			if ms, ok := q.(map[string]any)["MetricStat"].(map[string]any); ok {
				check(id, ms["Metric"].(map[string]any))
			}
		}
	}
	if found < 4 {
		t.Fatalf("found %d custom-metric alarms, want the postauth and reconciler ones", found)
	}
}

// TestEveryErrorMetricHasAnAlarm walks the app's error metrics (the
// core's internal/core/metrics.ErrorMetrics and the to-do app's
// todometrics.ErrorMetrics), the catalog of what each function counts as lost, skipped or failing work,
// and finds for each (function, metric) an alarm on exactly that metric:
// the project's namespace, the metric name, and the Stack and Function
// dimensions the function writes (a metric name alone would match another
// function's, or another stack's).
func TestEveryErrorMetricHasAnAlarm(t *testing.T) {
	s := Stack(t, "dev")
	stackName := JSON(*s.stack.StackName())
	alarmed := map[[2]string][]string{} // (function, metric) -> alarm ids
	for id, a := range s.Resources("AWS::CloudWatch::Alarm") {
		p := Props(a)
		if p["Namespace"] != metrics.Namespace {
			continue
		}
		dims := map[string]string{}
		for _, d := range asList(p["Dimensions"]) {
			dims[d.(map[string]any)["Name"].(string)] = JSON(d.(map[string]any)["Value"])
		}
		if len(dims) != 2 || dims[metrics.DimensionStack] != stackName {
			continue
		}
		fn := strings.Trim(dims[metrics.DimensionFunction], `"`)
		name, _ := p["MetricName"].(string)
		alarmed[[2]string{fn, name}] = append(alarmed[[2]string{fn, name}], id)
	}
	for _, fn := range sortedFunctions() {
		for _, name := range appErrorMetrics()[fn] {
			switch ids := alarmed[[2]string{fn, name}]; len(ids) {
			case 0:
				t.Errorf("no alarm on %s of function %s (Stack+Function dimensions): add one (operations builds it from metrics.ErrorMetrics unless a Source alarms on it)", name, fn)
			case 1:
			default:
				sort.Strings(ids)
				t.Errorf("%d alarms on %s of function %s: %v; give operations the construct that owns one as a Source", len(ids), name, fn, ids)
			}
		}
	}
}

// appErrorMetrics are the error metrics of the to-do app's functions: the
// core's and its own.
func appErrorMetrics() map[string][]string {
	all := maps.Clone(metrics.ErrorMetrics)
	maps.Copy(all, todometrics.ErrorMetrics)
	return all
}

func sortedFunctions() []string {
	var fns []string
	for fn := range appErrorMetrics() {
		fns = append(fns, fn)
	}
	sort.Strings(fns)
	return fns
}

type alarmSource []awscloudwatch.Alarm

func (a alarmSource) ErrorAlarms() []awscloudwatch.Alarm { return a }

// TestOperationsAlarmsEachErrorMetricOnce: operations alarms on every
// error metric it is given, on the function's Stack+Function metric,
// except those a Source alarms on already (no second alarm).
func TestOperationsAlarmsEachErrorMetricOnce(t *testing.T) {
	stack := customStack(t, "Ops")
	topic := awssns.NewTopic(stack, jsii.String("Alarms"), nil)
	own := awscloudwatch.NewAlarm(stack, jsii.String("Own"), &awscloudwatch.AlarmProps{
		Metric: awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(todometrics.ApiServerErrors),
			DimensionsMap: &map[string]*string{metrics.DimensionStack: stack.StackName(), metrics.DimensionFunction: jsii.String(todometrics.FunctionAPI)},
		}),
		Threshold: jsii.Number(1), EvaluationPeriods: jsii.Number(1),
	})
	ops := operations.NewOperations(stack, jsii.String("Operations"), &operations.OperationsProps{
		AlarmTopic: topic,
		ErrorMetrics: map[string][]string{
			todometrics.FunctionAPI:         {todometrics.ApiServerErrors},
			metrics.FunctionStreamProcessor: {metrics.MalformedRecords},
		},
		Sources: []operations.ErrorAlarmSource{alarmSource{own}},
	})
	if got := alarmIDs(ops); ops.Alarm("streamprocessorMalformedRecordsAlarm") == nil || len(got) != 1 {
		t.Fatalf("alarms %v, want only streamprocessorMalformedRecordsAlarm", got)
	}
	s := synthOf(t, stack)
	id := s.LogicalID(t, "AWS::CloudWatch::Alarm", "OperationsstreamprocessorMalformedRecords")
	p := Props(s.Resources("AWS::CloudWatch::Alarm")[id])
	dims := JSON(p["Dimensions"])
	if p["Namespace"] != metrics.Namespace || p["MetricName"] != metrics.MalformedRecords || p["Statistic"] != "Sum" ||
		!strings.Contains(dims, `"Value": "Ops"`) || !strings.Contains(dims, `"Value": "streamprocessor"`) ||
		!strings.Contains(JSON(p["AlarmActions"]), "Alarms") {
		t.Errorf("alarm %s", JSON(p))
	}
}

// alarmIDs are the construct ids of ops.AllAlarms, each checked to be
// what ops.Alarm finds under its id.
func alarmIDs(ops *operations.Operations) []string {
	var out []string
	for _, a := range ops.AllAlarms() {
		id := *a.Node().Id()
		if ops.Alarm(id) != a {
			id += " (not Alarm(id))"
		}
		out = append(out, id)
	}
	return out
}

// TestOperationsWatchAlarms: each watched function gets a throttles
// alarm, and an errors alarm unless ThrottlesOnly; each error metric one.
func TestOperationsWatchAlarms(t *testing.T) {
	stack := customStack(t, "OpsWatch")
	topic := awssns.NewTopic(stack, jsii.String("Alarms"), nil)
	api := awslambda.Function_FromFunctionName(stack, jsii.String("Api"), jsii.String("api"))
	worker := awslambda.Function_FromFunctionName(stack, jsii.String("Worker"), jsii.String("worker"))
	got := alarmIDs(operations.NewOperations(stack, jsii.String("Operations"), &operations.OperationsProps{
		AlarmTopic: topic, ErrorMetrics: map[string][]string{"api": {"Boom"}},
		Watch: []operations.WatchedFunction{{Name: "api", Function: api}, {Name: "worker", Function: worker, ThrottlesOnly: true}},
	}))
	want := []string{"apiBoomAlarm", "apiErrors", "apiThrottles", "workerThrottles"}
	if JSON(got) != JSON(want) {
		t.Fatalf("alarms %v, want %v", got, want)
	}
}
