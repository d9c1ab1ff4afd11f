package test

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/cancellation"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

// jobsSchema is a schema other than the to-do app's, as an adopter's.
var jobsSchema = contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt", StateAttr: "status",
	ArmedStates: []string{"Queued"}, FiredState: "Done", ScheduleNamePrefix: "job-"}

func TestScheduleOnWriteValidation(t *testing.T) {
	stack := customStack(t, "SowValidation")
	attr := func(n string) *awsdynamodb.Attribute {
		return &awsdynamodb.Attribute{Name: jsii.String(n), Type: awsdynamodb.AttributeType_STRING}
	}
	jobs := awsdynamodb.NewTable(stack, jsii.String("Jobs"), &awsdynamodb.TableProps{
		PartitionKey: attr("tenantId"), SortKey: attr("jobId"), Stream: awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
	})
	noStream := awsdynamodb.NewTable(stack, jsii.String("NoStream"), &awsdynamodb.TableProps{PartitionKey: attr("userId"), SortKey: attr("taskId")})
	partitionOnly := awsdynamodb.NewTable(stack, jsii.String("PartitionOnly"), &awsdynamodb.TableProps{
		PartitionKey: attr("userId"), Stream: awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
	})
	jobsV2 := awsdynamodb.NewTableV2(stack, jsii.String("JobsV2"), &awsdynamodb.TablePropsV2{
		PartitionKey: attr("tenantId"), SortKey: attr("jobId"), DynamoStream: awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
	})
	imported := awsdynamodb.Table_FromTableAttributes(stack, jsii.String("Imported"), &awsdynamodb.TableAttributes{
		TableArn: jsii.String("arn:aws:dynamodb:eu-west-1:111111111111:table/jobs"),
	})
	target := awslambda.Function_FromFunctionArn(stack, jsii.String("Target"), jsii.String("arn:aws:lambda:eu-west-1:111111111111:function:run"))
	standard := awssqs.Queue_FromQueueArn(stack, jsii.String("Standard"), jsii.String("arn:aws:sqs:eu-west-1:111111111111:dlq"))
	fifo := awssqs.Queue_FromQueueArn(stack, jsii.String("Fifo"), jsii.String("arn:aws:sqs:eu-west-1:111111111111:dlq.fifo"))
	seconds := func(n float64) awscdk.Duration { return awscdk.Duration_Seconds(jsii.Number(n)) }
	type props = scheduleonwrite.ScheduleOnWriteProps
	valid := func(edit func(p *props)) *props {
		p := &props{Target: target}
		edit(p)
		return p
	}
	// The scheduler timer's props are its own: on another timer they do
	// not compile.
	sched := func(tp scheduleonwrite.SchedulerTimerProps) *props {
		return &props{Target: target, Timer: scheduleonwrite.NewSchedulerTimer(&tp)}
	}
	for i, tc := range []struct {
		name  string
		props *props
		want  []string
	}{
		{"no props: no target", nil,
			[]string{"Target or FireEntry is required: set Target to your function to run at an item's due time", "FireEntry to your main package"}},
		{"a target function and an in-process target", valid(func(p *props) { p.FireEntry = "lambdas/todofire" }),
			[]string{`Target and FireEntry ("lambdas/todofire") are both set`, "not both"}},
		{"the firing function's environment without FireEntry", valid(func(p *props) { p.FireEnvironment = map[string]string{"WEB_URL": "x"} }),
			[]string{"FireModuleRoot and FireEnvironment configure the firing function of FireEntry: set FireEntry too"}},
		{"the firing function's environment naming the core's variable", &props{FireEntry: "lambdas/todofire",
			FireEnvironment: map[string]string{"TABLE_NAME": "x"}},
			[]string{"FireEnvironment sets TABLE_NAME, a name the construct sets itself: rename your variable"}},
		{"invalid schema", valid(func(p *props) { p.Schema = contract.Schema{DueAttr: "status"} }),
			[]string{"Schema:", `both "status"`}},
		{"existing table keyed otherwise", valid(func(p *props) { p.ExistingTable = jobs }),
			[]string{"ExistingTable is keyed tenantId/jobId but Schema says pk/sk", `set Schema.PartitionKey to "tenantId" and Schema.SortKey to "jobId"`}},
		{"existing TableV2 keyed otherwise", valid(func(p *props) { p.ExistingTable = jobsV2 }),
			[]string{"ExistingTable is keyed tenantId/jobId but Schema says pk/sk"}},
		{"imported table without its stream ARN", valid(func(p *props) { p.Schema = jobsSchema; p.ExistingTable = imported }),
			[]string{"has no stream", "import the table with its TableStreamArn"}},
		{"existing table without a sort key", valid(func(p *props) { p.ExistingTable = partitionOnly }),
			[]string{"is keyed userId (no sort key)", "Schema.NoSortKey to true"}},
		{"existing table without a stream", valid(func(p *props) { p.Schema = jobsSchema; p.ExistingTable = noStream }),
			[]string{"has no stream", "NEW_AND_OLD_IMAGES"}},
		{"deletion protection of an existing table", valid(func(p *props) { p.Schema = jobsSchema; p.ExistingTable = jobs; p.DeletionProtection = jsii.Bool(true) }),
			[]string{"DeletionProtection applies to the table this construct creates"}},
		{"schedule retries above the scheduler's limit", sched(scheduleonwrite.SchedulerTimerProps{ScheduleRetryAttempts: jsii.Number(186)}),
			[]string{"ScheduleRetryAttempts must be a whole number between 0 and 185 inclusive (given 186)"}},
		{"schedule event age under a minute", sched(scheduleonwrite.SchedulerTimerProps{ScheduleMaxEventAge: seconds(59)}),
			[]string{"ScheduleMaxEventAge must be a whole number of seconds between 60 and 86400 inclusive (given 59 seconds)"}},
		{"expiry timeout above Lambda's limit", valid(func(p *props) { p.FireTimeout = seconds(901) }),
			[]string{"FireTimeout must be a whole number of seconds between 1 and 900 inclusive (given 15 minutes 1 second)"}},
		{"expiry retries above Lambda's limit", sched(scheduleonwrite.SchedulerTimerProps{FireRetryAttempts: jsii.Number(3)}),
			[]string{"FireRetryAttempts must be a whole number between 0 and 2 inclusive (given 3)"}},
		{"expiry event age above six hours", sched(scheduleonwrite.SchedulerTimerProps{FireMaxEventAge: seconds(21601)}),
			[]string{"FireMaxEventAge must be a whole number between 60 and 21600 inclusive (given 21601)"}},
		{"dead-letter queue and its props", sched(scheduleonwrite.SchedulerTimerProps{ExistingDeadLetterQueue: standard, DeadLetterQueueProps: &awssqs.QueueProps{}}),
			[]string{"ExistingDeadLetterQueue and DeadLetterQueueProps are both set"}},
		{"FIFO dead-letter queue", sched(scheduleonwrite.SchedulerTimerProps{ExistingDeadLetterQueue: fifo}),
			[]string{"ExistingDeadLetterQueue is a FIFO queue", "only a standard queue"}},
		{"expiry failure queue and its props", sched(scheduleonwrite.SchedulerTimerProps{
			ExistingFireFailureQueue: standard, FireFailureQueueProps: &awssqs.QueueProps{},
		}), []string{"ExistingFireFailureQueue and FireFailureQueueProps are both set"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			WantPanic(t, func() { scheduleonwrite.NewScheduleOnWrite(stack, jsii.String(fmt.Sprint("S", i)), tc.props) }, tc.want...)
		})
	}
}

// TestScheduleOnWriteZeroMeansZero: a pointer prop set to 0 is 0, not the
// default (ScheduleRetryAttempts: 0 used to become 3).
func TestScheduleOnWriteZeroMeansZero(t *testing.T) {
	stack := customStack(t, "Zero")
	var s *scheduleonwrite.ScheduleOnWrite
	var c *cancellation.Cancellation
	Check(t, func() {
		s = scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Tasks"), &scheduleonwrite.ScheduleOnWriteProps{
			Target: importedTarget(stack, "Target"),
			Timer:  scheduleonwrite.NewSchedulerTimer(&scheduleonwrite.SchedulerTimerProps{ScheduleRetryAttempts: jsii.Number(0), FireRetryAttempts: jsii.Number(0)}),
		})
		c = cancellation.NewCancellation(stack, jsii.String("Pipeline"), &cancellation.CancellationProps{Table: s.Table, Timer: s.Timer})
	})
	syn := synthOf(t, stack)
	worker := Props(syn.Resources("AWS::Lambda::Function")[*stack.GetLogicalId(c.Worker.Function.Node().DefaultChild().(awscdk.CfnElement))])
	env := worker["Environment"].(map[string]any)["Variables"].(map[string]any)
	if env["SCHEDULE_RETRIES"] != "0" {
		t.Errorf("SCHEDULE_RETRIES = %v, want 0", env["SCHEDULE_RETRIES"])
	}
	for _, cfg := range syn.Resources("AWS::Lambda::EventInvokeConfig") {
		if Props(cfg)["MaximumRetryAttempts"] != 0.0 {
			t.Errorf("expiry retries %v, want 0", Props(cfg)["MaximumRetryAttempts"])
		}
	}
}

// TestScheduleOnWriteForAnotherSchema: the table it creates is keyed by
// the schema (no to-do indexes), the expiry function gets the schema and
// the target, and may invoke the target only.
func TestScheduleOnWriteForAnotherSchema(t *testing.T) {
	stack := customStack(t, "Jobs")
	arn := "arn:aws:lambda:eu-west-1:111111111111:function:run"
	var s *scheduleonwrite.ScheduleOnWrite
	Check(t, func() {
		s = scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Jobs"), &scheduleonwrite.ScheduleOnWriteProps{
			Schema: jobsSchema,
			Target: awslambda.Function_FromFunctionArn(stack, jsii.String("Target"), jsii.String(arn)),
		})
	})
	syn := synthOf(t, stack)
	for _, tbl := range syn.Resources("AWS::DynamoDB::Table") {
		p := Props(tbl)
		want := `[{"AttributeName":"tenantId","KeyType":"HASH"},{"AttributeName":"jobId","KeyType":"RANGE"}]`
		if got, _ := json.Marshal(p["KeySchema"]); string(got) != want || p["LocalSecondaryIndexes"] != nil { // its armed index: armedindex_test.go
			t.Errorf("table %s", JSON(p))
		}
	}
	expiry := *stack.GetLogicalId(s.Fire.Function.Node().DefaultChild().(awscdk.CfnElement))
	env := Props(syn.Resources("AWS::Lambda::Function")[expiry])["Environment"].(map[string]any)["Variables"].(map[string]any)
	// The default 10 s timeout gives the 60 s minimum lease: a retried
	// firing takes over only from an attempt that has surely ended.
	if env[scheduleonwrite.EnvFireLease] != "60" {
		t.Errorf("expiry lease %v, want 60 (seconds)", env[scheduleonwrite.EnvFireLease])
	}
	if env[scheduleonwrite.EnvTargetFunction] != arn || env[contract.EnvVar] != jobsSchema.WithDefaults().EnvValue() {
		t.Errorf("expiry environment %s", JSON(env))
	}
	if _, ok := env["TOPIC_ARN_PREFIX"]; ok {
		t.Error("the core has SNS settings: it knows no notifications")
	}
	invoke := 0
	for _, st := range syn.FunctionStatements(t, expiry) {
		for _, a := range Actions(st) {
			if strings.HasPrefix(a, "lambda:") {
				invoke++
				if got := JSON(st["Resource"]); got != JSON([]any{arn, arn + ":*"}) {
					t.Errorf("%s on %s, want the target only", a, got)
				}
			}
		}
	}
	if invoke == 0 {
		t.Error("the expiry function may not invoke the target")
	}
}

// TestScheduleOnWriteGrantsIncludeTheTableKey: Grant...Items include the
// table's customer-managed key; the existing grants keep working.
func TestScheduleOnWriteGrantsIncludeTheTableKey(t *testing.T) {
	stack := customStack(t, "Grants")
	key := awskms.NewKey(stack, jsii.String("Key"), nil)
	table := awsdynamodb.NewTable(stack, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey:  &awsdynamodb.Attribute{Name: jsii.String("tenantId"), Type: awsdynamodb.AttributeType_STRING},
		SortKey:       &awsdynamodb.Attribute{Name: jsii.String("jobId"), Type: awsdynamodb.AttributeType_STRING},
		Stream:        awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
		Encryption:    awsdynamodb.TableEncryption_CUSTOMER_MANAGED,
		EncryptionKey: key,
	})
	role := func(id string) awsiam.Role {
		return awsiam.NewRole(stack, jsii.String(id), &awsiam.RoleProps{AssumedBy: awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil)})
	}
	writer, reader, creator := role("Writer"), role("Reader"), role("Creator")
	Check(t, func() {
		timer := scheduleonwrite.NewSchedulerTimer(nil)
		s := scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Jobs"), &scheduleonwrite.ScheduleOnWriteProps{
			Schema: jobsSchema, ExistingTable: table, Timer: timer,
			Target: awslambda.Function_FromFunctionArn(stack, jsii.String("Target"), jsii.String("arn:aws:lambda:eu-west-1:111111111111:function:run")),
		})
		s.GrantWriteItems(writer)
		s.GrantReadItems(reader)
		timer.GrantCreateSchedules(creator)
	})
	syn := synthOf(t, stack)
	for _, tc := range []struct {
		role awsiam.Role
		want []string
		not  []string
	}{
		{writer, []string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey*"}, []string{"dynamodb:Scan"}},
		{reader, []string{"dynamodb:GetItem", "dynamodb:Query", "kms:Decrypt"}, []string{"dynamodb:PutItem", "kms:Encrypt"}},
		{creator, []string{"scheduler:CreateSchedule", "iam:PassRole"}, []string{"scheduler:DeleteSchedule"}},
	} {
		got := ActionMap(syn.RoleStatements(*stack.GetLogicalId(tc.role.Node().DefaultChild().(awscdk.CfnElement))))
		for _, a := range tc.want {
			if got[a] == "" {
				t.Errorf("%s lacks %s: %s", *tc.role.Node().Id(), a, JSON(got))
			}
		}
		for _, a := range tc.not {
			if got[a] != "" {
				t.Errorf("%s has %s", *tc.role.Node().Id(), a)
			}
		}
	}
}

// TestMetricMethods: every Metric method names a metric of the one list
// (internal/core/metrics) with the dimensions the function writes.
func TestMetricMethods(t *testing.T) {
	stack := customStack(t, "Metrics")
	var ms []struct {
		fn, name string
		m        awscloudwatch.Metric
	}
	add := func(fn, name string, m awscloudwatch.Metric) {
		ms = append(ms, struct {
			fn, name string
			m        awscloudwatch.Metric
		}{fn, name, m})
	}
	Check(t, func() {
		s, timer := todoCore(stack)
		c := cancellation.NewCancellation(stack, jsii.String("Pipeline"), &cancellation.CancellationProps{Table: s.Table, Timer: s.Timer})
		r, _ := s.Reconciler, timer // the core's own reconciler
		add(metrics.FunctionExpiry, metrics.FireErrors, s.MetricFireErrors(nil))
		add(metrics.FunctionExpiry, metrics.FireBadInput, s.MetricFireBadInput(nil))
		add(metrics.FunctionExpiry, metrics.ItemsFired, s.MetricFired(nil))
		add(metrics.FunctionExpiry, metrics.FireSkipped, s.MetricFireSkipped(nil))
		add(metrics.FunctionExpiry, metrics.DeliveryLagSeconds, s.MetricLagSeconds(&awscloudwatch.MetricOptions{Statistic: jsii.String("p99")}))
		add(metrics.FunctionStreamProcessor, metrics.MalformedRecords, c.MetricMalformedRecords(nil))
		add(metrics.FunctionStreamProcessor, metrics.EnqueueFailed, c.MetricEnqueueFailed(nil))
		add(metrics.FunctionStreamProcessor, metrics.Enqueued, c.MetricEnqueued(nil))
		add(metrics.FunctionStreamProcessor, metrics.Undeliverable, c.MetricUndeliverable(nil))
		add(metrics.FunctionCancelWorker, metrics.Cancelled, c.MetricCancelled(nil))
		add(metrics.FunctionCancelWorker, metrics.Rescheduled, c.MetricRescheduled(nil))
		add(metrics.FunctionCancelWorker, metrics.ScheduleCreated, c.MetricScheduleCreated(nil))
		add(metrics.FunctionCancelWorker, metrics.Malformed, c.MetricWorkerMalformed(nil))
		add(metrics.FunctionCancelWorker, metrics.RetryableFailures, c.MetricRetryableFailures(nil))
		add(metrics.FunctionReconciler, metrics.Repaired, r.MetricRepaired(nil))
		add(metrics.FunctionReconciler, metrics.LeftOver, r.MetricLeftOver(nil))
		add(metrics.FunctionReconciler, metrics.PassesCompleted, r.MetricPassesCompleted(nil))
		add(metrics.FunctionReconciler, metrics.ReconcilerErrors, r.MetricErrors(nil))
	})
	for _, x := range ms {
		t.Run(x.fn+"/"+x.name, func(t *testing.T) {
			dims := *x.m.Dimensions()
			if *x.m.Namespace() != metrics.Namespace || *x.m.MetricName() != x.name ||
				fmt.Sprint(dims[metrics.DimensionFunction]) != x.fn || fmt.Sprint(stack.Resolve(dims[metrics.DimensionStack])) != "Metrics" {
				t.Errorf("metric %s %s %v", *x.m.Namespace(), *x.m.MetricName(), dims)
			}
		})
	}
}

// TestErrorAlarmsCoverEveryErrorMetric: each construct has one typed
// alarm field per error metric of its functions (metrics.ErrorMetrics),
// each on that metric; its ErrorAlarms (what the operations construct
// reads to add no second alarm) are those fields in the metrics' order;
// the template has no other alarm on those error metrics; and Alarms
// holds every alarm the construct created.
func TestErrorAlarmsCoverEveryErrorMetric(t *testing.T) {
	stack := customStack(t, "ErrorAlarms")
	type fieldsOf = map[string]map[string]awscloudwatch.Alarm // function -> metric -> field
	type row struct {
		name        string
		scope       constructs.IConstruct
		fns         []string // in the order of ErrorAlarms
		fields      fieldsOf
		errorAlarms []awscloudwatch.Alarm
		all         []awscloudwatch.Alarm
	}
	var rows []row
	Check(t, func() {
		s, timer := todoCore(stack)
		c := cancellation.NewCancellation(stack, jsii.String("Pipeline"), &cancellation.CancellationProps{Table: s.Table, Timer: s.Timer})
		r, _ := s.Reconciler, timer // the core's own reconciler
		rows = []row{
			{"scheduleonwrite", s, []string{metrics.FunctionExpiry}, fieldsOf{metrics.FunctionExpiry: {
				metrics.FireBadInput: s.FireBadInputAlarm, metrics.FireErrors: s.FireErrorsAlarm,
			}}, s.ErrorAlarms(), s.Alarms()},
			{"cancellation", c, []string{metrics.FunctionStreamProcessor, metrics.FunctionCancelWorker}, fieldsOf{
				metrics.FunctionStreamProcessor: {
					metrics.MalformedRecords: c.MalformedRecordsAlarm, metrics.Undeliverable: c.UndeliverableAlarm,
					metrics.EnqueueFailed: c.EnqueueFailedAlarm,
				},
				metrics.FunctionCancelWorker: {
					metrics.Malformed: c.WorkerMalformedAlarm, metrics.RetryableFailures: c.WorkerRetryableFailuresAlarm,
					metrics.ScheduleRefused: c.WorkerScheduleRefusedAlarm,
				},
			}, c.ErrorAlarms(), c.Alarms()},
			{"reconciler", r, []string{metrics.FunctionReconciler}, fieldsOf{metrics.FunctionReconciler: {metrics.ReconcilerErrors: r.RunErrorsAlarm}}, r.ErrorAlarms(), r.Alarms()},
		}
	})
	logicalID := func(a awscloudwatch.Alarm) string {
		return fmt.Sprint(stack.Resolve(stack.GetLogicalId(a.Node().DefaultChild().(awscdk.CfnElement))))
	}
	ids := func(as []awscloudwatch.Alarm) string {
		var out []string
		for _, a := range as {
			out = append(out, logicalID(a))
		}
		return strings.Join(out, " ")
	}
	synth := synthOf(t, stack)
	// Template alarms on the project's metrics, by (function, metric).
	inTemplate := map[[2]string][]string{}
	for id, a := range synth.Resources("AWS::CloudWatch::Alarm") {
		p := Props(a)
		if p["Namespace"] != metrics.Namespace {
			continue
		}
		for _, d := range asList(p["Dimensions"]) {
			if dm := d.(map[string]any); dm["Name"] == metrics.DimensionFunction {
				k := [2]string{fmt.Sprint(dm["Value"]), fmt.Sprint(p["MetricName"])}
				inTemplate[k] = append(inTemplate[k], id)
			}
		}
	}
	for _, x := range rows {
		t.Run(x.name, func(t *testing.T) {
			var wantErrorAlarms []awscloudwatch.Alarm
			if len(x.fns) != len(x.fields) {
				t.Fatalf("functions %v, fields of %d", x.fns, len(x.fields))
			}
			for _, fn := range x.fns {
				if len(x.fields[fn]) != len(metrics.ErrorMetrics[fn]) {
					t.Errorf("%s: %d typed alarm fields, want one per metrics.ErrorMetrics entry %v", fn, len(x.fields[fn]), metrics.ErrorMetrics[fn])
				}
				for _, name := range metrics.ErrorMetrics[fn] {
					a, ok := x.fields[fn][name]
					if !ok || a == nil {
						t.Errorf("%s: no typed alarm field set for error metric %s", fn, name)
						continue
					}
					wantErrorAlarms = append(wantErrorAlarms, a)
					m := a.Metric().(awscloudwatch.Metric)
					if *m.Namespace() != metrics.Namespace || *m.MetricName() != name ||
						fmt.Sprint(stack.Resolve((*m.Dimensions())[metrics.DimensionFunction])) != fn {
						t.Errorf("%s: the field for %s alarms on %s/%s %v", fn, name, *m.Namespace(), *m.MetricName(), *m.Dimensions())
					}
					if ids := inTemplate[[2]string{fn, name}]; len(ids) != 1 || ids[0] != logicalID(a) {
						t.Errorf("%s: template alarms on %s: %v, want only the field's %s", fn, name, ids, logicalID(a))
					}
				}
			}
			if ids(x.errorAlarms) != ids(wantErrorAlarms) {
				t.Errorf("ErrorAlarms() %v, want the typed fields in the order of metrics.ErrorMetrics %v", ids(x.errorAlarms), ids(wantErrorAlarms))
			}
			// Alarms() is every alarm under the construct, each once.
			var want, got []string
			for _, n := range *x.scope.Node().FindAll(constructs.ConstructOrder_PREORDER) {
				if cfn, ok := n.(awscdk.CfnResource); ok && *awscdk.CfnResource_IsCfnResource(n) && *cfn.CfnResourceType() == "AWS::CloudWatch::Alarm" {
					want = append(want, fmt.Sprint(stack.Resolve(stack.GetLogicalId(cfn))))
				}
			}
			for _, a := range x.all {
				got = append(got, logicalID(a))
			}
			for _, a := range x.errorAlarms {
				if !slices.Contains(got, logicalID(a)) {
					t.Errorf("Alarms() lacks error alarm %s", logicalID(a))
				}
			}
			sort.Strings(want)
			sort.Strings(got)
			if len(want) == 0 || JSON(got) != JSON(want) {
				t.Errorf("Alarms() %v, want every alarm under the construct %v", got, want)
			}
		})
	}
}

// TestScheduleOnWriteTableDeletionProtection: the table ScheduleOnWrite
// creates follows the rule of every adopter's table (resource.Protected):
// protected exactly when it is retained, unless the prop says otherwise.
func TestScheduleOnWriteTableDeletionProtection(t *testing.T) {
	arn := "arn:aws:lambda:eu-west-1:111111111111:function:run"
	for _, c := range []struct {
		name    string
		removal awscdk.RemovalPolicy
		prop    *bool
		want    bool
	}{
		{"retained by default: protected", "", nil, true},
		{"destroyed: not protected", awscdk.RemovalPolicy_DESTROY, nil, false},
		{"retained, turned off", awscdk.RemovalPolicy_RETAIN, jsii.Bool(false), false},
		{"destroyed, turned on", awscdk.RemovalPolicy_DESTROY, jsii.Bool(true), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			stack := customStack(t, "Protect")
			Check(t, func() {
				scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Jobs"), &scheduleonwrite.ScheduleOnWriteProps{
					Schema: jobsSchema, RemovalPolicy: c.removal, DeletionProtection: c.prop,
					Target: awslambda.Function_FromFunctionArn(stack, jsii.String("Target"), jsii.String(arn)),
				})
			})
			tables := synthOf(t, stack).Resources("AWS::DynamoDB::Table")
			if len(tables) != 1 {
				t.Fatalf("%d tables, want 1", len(tables))
			}
			for _, tbl := range tables {
				if got, _ := Props(tbl)["DeletionProtectionEnabled"].(bool); got != c.want {
					t.Errorf("DeletionProtectionEnabled = %v, want %v", got, c.want)
				}
			}
		})
	}
}
