package test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/cancellation"
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
)

// getAtt renders {"Fn::GetAtt": [id, attr]} as the template holds it.
func getAtt(id, attr string) map[string]any {
	return map[string]any{"Fn::GetAtt": []any{id, attr}}
}

func ref(id string) map[string]any { return map[string]any{"Ref": id} }

// mappingOf returns the one event source mapping of the function with
// logical id fnID.
func (s *synthed) mappingOf(t *testing.T, fnID string) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, m := range s.Resources("AWS::Lambda::EventSourceMapping") {
		if JSON(Props(m)["FunctionName"]) == JSON(ref(fnID)) {
			found = append(found, Props(m))
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one event source mapping of %s, found %d", fnID, len(found))
	}
	return found[0]
}

// cfnText flattens a CloudFormation value to text: Ref and GetAtt become
// ${...}, Fn::Join is joined, so an ARN pattern reads as one string.
func cfnText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		if r, ok := x["Ref"]; ok {
			return "${" + fmt.Sprint(r) + "}"
		}
		if g, ok := x["Fn::GetAtt"].([]any); ok && len(g) == 2 {
			return fmt.Sprintf("${%v.%v}", g[0], g[1])
		}
		if j, ok := x["Fn::Join"].([]any); ok && len(j) == 2 {
			var parts []string
			for _, p := range j[1].([]any) {
				parts = append(parts, cfnText(p))
			}
			return strings.Join(parts, j[0].(string))
		}
	}
	return JSON(v)
}

// resources flattens a statement's Resource (one value or a list).
func resources(st map[string]any) []string {
	if list, ok := st["Resource"].([]any); ok {
		out := make([]string, len(list))
		for i, r := range list {
			out[i] = cfnText(r)
		}
		return out
	}
	return []string{cfnText(st["Resource"])}
}

// groupSchedules is the ARN pattern of every schedule in the stack's one
// schedule group, as cfnText renders it.
func (s *synthed) groupSchedules(t *testing.T) string {
	t.Helper()
	groups := s.Resources("AWS::Scheduler::ScheduleGroup")
	if len(groups) != 1 {
		t.Fatalf("want one schedule group, found %d", len(groups))
	}
	for id, g := range groups {
		name := "${" + id + "}"
		if n, ok := Props(g)["Name"].(string); ok {
			name = n
		}
		return "arn:${AWS::Partition}:scheduler:${AWS::Region}:${AWS::AccountId}:schedule/" + name + "/*"
	}
	return ""
}

// checkSchedulerScope fails unless every scheduler:* action of sts is on
// the group's schedules only, and "*" appears only for ListSchedules
// (allowed when listOK).
func checkSchedulerScope(t *testing.T, sts []map[string]any, group string, listOK bool) {
	t.Helper()
	for _, st := range sts {
		acts := Actions(st)
		for _, r := range resources(st) {
			if r == "*" {
				if !listOK || !slices.Equal(acts, []string{"scheduler:ListSchedules"}) {
					t.Errorf("actions %v on \"*\"; only scheduler:ListSchedules may be", acts)
				}
				continue
			}
			for _, a := range acts {
				if strings.HasPrefix(a, "scheduler:") && r != group {
					t.Errorf("%s on %s, want only %s", a, r, group)
				}
			}
		}
	}
}

func TestCancellationQueuesAreFifoEncryptedAndRedriven(t *testing.T) {
	s := Stack(t, "dev")
	queue := s.LogicalID(t, "AWS::SQS::Queue", "CancellationQueue")
	dlq := s.LogicalID(t, "AWS::SQS::Queue", "CancellationDeadLetterQueue")
	failures := s.LogicalID(t, "AWS::SQS::Queue", "CancellationStreamFailureQueue")
	worker := Props(s.Resources("AWS::Lambda::Function")[s.LogicalID(t, "AWS::Lambda::Function", "CancellationWorker")])
	for _, tc := range []struct {
		name, id string
		want     map[string]any
	}{
		{"fifo queue", queue, map[string]any{
			"FifoQueue": true, "ContentBasedDeduplication": false, "SqsManagedSseEnabled": true,
			"RedrivePolicy": map[string]any{"deadLetterTargetArn": getAtt(dlq, "Arn"), "maxReceiveCount": float64(cancellation.DefaultMaxReceiveCount)},
		}},
		{"fifo dead-letter queue", dlq, map[string]any{
			"FifoQueue": true, "SqsManagedSseEnabled": true, "MessageRetentionPeriod": float64(14 * 86400),
		}},
		{"stream failure queue (standard: an on-failure destination cannot be FIFO)", failures, map[string]any{
			"SqsManagedSseEnabled": true, "MessageRetentionPeriod": float64(14 * 86400),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := Props(s.Resources("AWS::SQS::Queue")[tc.id])
			for k, v := range tc.want {
				if JSON(p[k]) != JSON(v) {
					t.Errorf("%s = %s, want %s", k, JSON(p[k]), JSON(v))
				}
			}
			if tc.id != queue && p["RedrivePolicy"] != nil {
				t.Errorf("a dead-letter queue has its own redrive policy: %s", JSON(p["RedrivePolicy"]))
			}
			tlsOnly := false
			for _, pol := range s.Resources("AWS::SQS::QueuePolicy") {
				pp := Props(pol)
				if JSON(pp["Queues"]) != JSON([]any{ref(tc.id)}) {
					continue
				}
				for _, st := range pp["PolicyDocument"].(map[string]any)["Statement"].([]any) {
					st := st.(map[string]any)
					tlsOnly = tlsOnly || st["Effect"] == "Deny" &&
						JSON(st["Condition"]) == JSON(map[string]any{"Bool": map[string]any{"aws:SecureTransport": "false"}})
				}
			}
			if !tlsOnly {
				t.Error("no queue policy denies requests without TLS")
			}
		})
	}
	t.Run("visibility timeout is at least six worker timeouts", func(t *testing.T) {
		vis := Props(s.Resources("AWS::SQS::Queue")[queue])["VisibilityTimeout"].(float64)
		timeout := worker["Timeout"].(float64)
		if vis < 6*timeout {
			t.Fatalf("visibility timeout %vs < 6 × worker timeout %vs", vis, timeout)
		}
	})
}

func TestCancellationStreamMapping(t *testing.T) {
	s := Stack(t, "dev")
	processor := s.LogicalID(t, "AWS::Lambda::Function", "CancellationProcessor")
	m := s.mappingOf(t, processor)
	for _, tc := range []struct {
		key  string
		want any
	}{
		{"EventSourceArn", getAtt(s.LogicalID(t, "AWS::DynamoDB::Table", "TasksTable"), "StreamArn")},
		{"StartingPosition", "TRIM_HORIZON"},
		{"BatchSize", float64(cancellation.DefaultBatchSize)},
		{"FunctionResponseTypes", []any{"ReportBatchItemFailures"}},
		{"BisectBatchOnFunctionError", true},
		{"MaximumRetryAttempts", float64(cancellation.DefaultRetryAttempts)},
		{"MaximumRecordAgeInSeconds", float64(cancellation.DefaultMaxRecordAgeSec)},
		{"DestinationConfig", map[string]any{"OnFailure": map[string]any{
			"Destination": getAtt(s.LogicalID(t, "AWS::SQS::Queue", "CancellationStreamFailureQueue"), "Arn")}}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			if JSON(m[tc.key]) != JSON(tc.want) {
				t.Fatalf("%s = %s, want %s", tc.key, JSON(m[tc.key]), JSON(tc.want))
			}
		})
	}

	t.Run("filter patterns: the schema's armed states, never its keys", func(t *testing.T) {
		checkStreamFilters(t, m, tableschema.Todo())
	})
}

// checkStreamFilters compares the mapping's synthesized FilterCriteria
// with the patterns the shared decision asks for, written out here from
// the schema's StateAttr and ArmedStates (not from the construct's code):
// INSERT with NewImage armed; MODIFY/REMOVE with OldImage armed; MODIFY
// with NewImage armed. Lambda ORs the filters of a mapping and matches an
// image attribute as {"S": [values]}:
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html
// https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html
// No emulator here applies Lambda's filtering (moto does not), so we pin
// the patterns themselves instead of a model of the matcher of our own.
func checkStreamFilters(t *testing.T, mapping map[string]any, schema contract.Schema) {
	t.Helper()
	states := make([]any, len(schema.ArmedStates))
	for i, a := range schema.ArmedStates {
		states[i] = a
	}
	armed := func(image string) map[string]any {
		return map[string]any{image: map[string]any{schema.StateAttr: map[string]any{"S": states}}}
	}
	want := []any{
		map[string]any{"eventName": []any{"INSERT"}, "dynamodb": armed("NewImage")},
		map[string]any{"eventName": []any{"MODIFY", "REMOVE"}, "dynamodb": armed("OldImage")},
		map[string]any{"eventName": []any{"MODIFY"}, "dynamodb": armed("NewImage")},
	}
	filters := mapping["FilterCriteria"].(map[string]any)["Filters"].([]any)
	var got []any
	for _, f := range filters {
		text := f.(map[string]any)["Pattern"].(string)
		if len(text) > 4096 {
			t.Errorf("pattern of %d characters; Lambda allows 4096", len(text))
		}
		for _, k := range []string{`"Keys"`, `"` + schema.PartitionKey + `"`, `"` + schema.SortKey + `"`} {
			if strings.Contains(text, k) {
				t.Errorf("pattern %s names %s: filters must not depend on key names", text, k)
			}
		}
		var pat any
		if err := json.Unmarshal([]byte(text), &pat); err != nil {
			t.Fatal(err)
		}
		got = append(got, pat)
	}
	if len(got) > 5 {
		t.Errorf("%d filters; a mapping takes five by default", len(got))
	}
	if JSON(got) != JSON(want) {
		t.Fatalf("filters\n got %s\nwant %s", JSON(got), JSON(want))
	}
}

func TestCancellationWorkerMappingAndEnvironment(t *testing.T) {
	s := Stack(t, "dev")
	worker := s.LogicalID(t, "AWS::Lambda::Function", "CancellationWorker")
	queue := s.LogicalID(t, "AWS::SQS::Queue", "CancellationQueue")
	m := s.mappingOf(t, worker)
	for _, tc := range []struct {
		key  string
		want any
	}{
		{"EventSourceArn", getAtt(queue, "Arn")},
		{"BatchSize", float64(cancellation.DefaultWorkerBatchSize)},
		{"FunctionResponseTypes", []any{"ReportBatchItemFailures"}},
		{"ScalingConfig", map[string]any{"MaximumConcurrency": float64(cancellation.DefaultWorkerMaxConcurrency)}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			if JSON(m[tc.key]) != JSON(tc.want) {
				t.Fatalf("%s = %s, want %s", tc.key, JSON(m[tc.key]), JSON(tc.want))
			}
		})
	}
	env := func(id string) map[string]any {
		return Props(s.Resources("AWS::Lambda::Function")[id])["Environment"].(map[string]any)["Variables"].(map[string]any)
	}
	t.Run("processor reads QUEUE_URL and the schema", func(t *testing.T) {
		got := env(s.LogicalID(t, "AWS::Lambda::Function", "CancellationProcessor"))
		if JSON(got) != JSON(map[string]any{"QUEUE_URL": ref(queue), envvars.MetricsStack: "Unschedule-dev", contract.EnvVar: tableschema.Todo().EnvValue()}) {
			t.Fatalf("environment %s", JSON(got))
		}
	})
	t.Run("worker reads the scheduler settings", func(t *testing.T) {
		got := env(worker)
		for _, k := range []string{"SCHEDULE_GROUP", "SCHEDULE_TARGET_ARN", "SCHEDULER_ROLE_ARN", "SCHEDULER_DLQ_ARN"} {
			if got[k] == nil || got[k] == "" {
				t.Errorf("%s missing from %s", k, JSON(got))
			}
		}
	})
}

func TestCancellationLeastPrivilege(t *testing.T) {
	s := Stack(t, "dev")
	group := s.groupSchedules(t)
	queue := "${" + s.LogicalID(t, "AWS::SQS::Queue", "CancellationQueue") + ".Arn}"
	failures := "${" + s.LogicalID(t, "AWS::SQS::Queue", "CancellationStreamFailureQueue") + ".Arn}"
	stream := "${" + s.LogicalID(t, "AWS::DynamoDB::Table", "TasksTable") + ".StreamArn}"
	schedulerRole := "${" + s.LogicalID(t, "AWS::IAM::Role", "TasksSchedulerRole") + ".Arn}"
	processorLogs := "${" + s.LogicalID(t, "AWS::Logs::LogGroup", "CancellationProcessorLogs") + ".Arn}"
	workerLogs := "${" + s.LogicalID(t, "AWS::Logs::LogGroup", "CancellationWorkerLogs") + ".Arn}"

	t.Run("processor: stream read and send to its queues; no scheduler, no table writes", func(t *testing.T) {
		sts := s.FunctionStatements(t, "CancellationProcessor")
		for _, st := range sts {
			for _, a := range Actions(st) {
				res := resources(st)
				switch {
				case strings.HasPrefix(a, "scheduler:"), a == "iam:PassRole", strings.HasSuffix(a, ":*"):
					t.Errorf("processor may not %s", a)
				case slices.Contains([]string{"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem",
					"dynamodb:BatchWriteItem", "dynamodb:TransactWriteItems"}, a):
					t.Errorf("processor may not write the table (%s)", a)
				case strings.HasPrefix(a, "sqs:"):
					for _, r := range res {
						if r != queue && r != failures {
							t.Errorf("%s on %s: only the FIFO queue and the stream failure queue", a, r)
						}
					}
				case a == "logs:CreateLogStream", a == "logs:PutLogEvents":
					if !slices.Equal(res, []string{processorLogs}) {
						t.Errorf("%s on %v, want only its own log group", a, res)
					}
				case a == "dynamodb:ListStreams": // no resource-level permissions
				case strings.HasPrefix(a, "dynamodb:"):
					if !slices.Equal(res, []string{stream}) {
						t.Errorf("%s on %v, want only the stream", a, res)
					}
				default:
					t.Errorf("unexpected action %s on %v", a, res)
				}
			}
		}
		got := ActionMap(sts)
		if got["sqs:SendMessage"] == "" || got["dynamodb:GetRecords"] == "" {
			t.Fatalf("processor lacks send or stream read: %s", JSON(got))
		}
	})
	t.Run("worker: schedules inside the group, PassRole of the scheduler role, consume its queue", func(t *testing.T) {
		sts := s.FunctionStatements(t, "CancellationWorker")
		checkSchedulerScope(t, sts, group, false)
		want := map[string][]string{
			"scheduler:CreateSchedule": {group}, "scheduler:UpdateSchedule": {group},
			"scheduler:DeleteSchedule": {group},
			"iam:PassRole":             {schedulerRole},
			"sqs:ReceiveMessage":       {queue}, "sqs:DeleteMessage": {queue},
			"sqs:ChangeMessageVisibility": {queue}, "sqs:GetQueueAttributes": {queue}, "sqs:GetQueueUrl": {queue},
			"logs:CreateLogStream": {workerLogs}, "logs:PutLogEvents": {workerLogs},
		}
		got := map[string][]string{}
		for _, st := range sts {
			for _, a := range Actions(st) {
				got[a] = append(got[a], resources(st)...)
				if a == "iam:PassRole" && JSON(st["Condition"]) != JSON(map[string]any{
					"StringEquals": map[string]any{"iam:PassedToService": "scheduler.amazonaws.com"}}) {
					t.Errorf("PassRole without the scheduler condition: %s", JSON(st["Condition"]))
				}
			}
		}
		if JSON(got) != JSON(want) {
			t.Fatalf("worker policy\n got %s\nwant %s", JSON(got), JSON(want))
		}
	})
}

func TestCancellationAlarms(t *testing.T) {
	s := Stack(t, "dev")
	topic := []any{ref(s.LogicalID(t, "AWS::SNS::Topic", "AlarmTopic"))}
	queueDim := func(prefix string) any {
		return []any{map[string]any{"Name": "QueueName", "Value": getAtt(s.LogicalID(t, "AWS::SQS::Queue", prefix), "QueueName")}}
	}
	fnDim := func(prefix string) any {
		return []any{map[string]any{"Name": "FunctionName", "Value": ref(s.LogicalID(t, "AWS::Lambda::Function", prefix))}}
	}
	for _, tc := range []struct {
		alarm string
		want  map[string]any
	}{
		{"CancellationDeadLetterAlarm", map[string]any{"Namespace": "AWS/SQS", "MetricName": "ApproximateNumberOfMessagesVisible",
			"Dimensions": queueDim("CancellationDeadLetterQueue"), "Threshold": 1.0, "ComparisonOperator": "GreaterThanOrEqualToThreshold"}},
		{"CancellationStreamFailureAlarm", map[string]any{"Namespace": "AWS/SQS", "MetricName": "ApproximateNumberOfMessagesVisible",
			"Dimensions": queueDim("CancellationStreamFailureQueue"), "Threshold": 1.0, "ComparisonOperator": "GreaterThanOrEqualToThreshold"}},
		{"CancellationIteratorAgeAlarm", map[string]any{"Namespace": "AWS/Lambda", "MetricName": "IteratorAge", "Statistic": "Maximum",
			"Dimensions": fnDim("CancellationProcessor"), "Threshold": float64(cancellation.IteratorAgeAlarmSec * 1000),
			"ComparisonOperator": "GreaterThanThreshold"}},
		{"CancellationProcessorErrorsAlarm", map[string]any{"Namespace": "AWS/Lambda", "MetricName": "Errors",
			"Dimensions": fnDim("CancellationProcessor"), "Threshold": 1.0, "ComparisonOperator": "GreaterThanOrEqualToThreshold"}},
		{"CancellationWorkerErrorsAlarm", map[string]any{"Namespace": "AWS/Lambda", "MetricName": "Errors",
			"Dimensions": fnDim("CancellationWorker"), "Threshold": 1.0, "ComparisonOperator": "GreaterThanOrEqualToThreshold"}},
		// A schedule the timer refuses for good is acknowledged,
		// not retried: this alarm is what tells anyone.
		{"CancellationWorkerScheduleRefusedAlarm", map[string]any{"Namespace": metrics.Namespace, "MetricName": metrics.ScheduleRefused,
			"Statistic": "Sum", "Threshold": 1.0, "ComparisonOperator": "GreaterThanOrEqualToThreshold"}},
	} {
		t.Run(tc.alarm, func(t *testing.T) {
			p := Props(s.Resources("AWS::CloudWatch::Alarm")[s.LogicalID(t, "AWS::CloudWatch::Alarm", tc.alarm)])
			tc.want["AlarmActions"] = topic
			for k, v := range tc.want {
				if JSON(p[k]) != JSON(v) {
					t.Errorf("%s = %s, want %s", k, JSON(p[k]), JSON(v))
				}
			}
		})
	}
}

// fakeSchedules stands in for a bound timer (the scheduler timer's
// grants too).
type fakeSchedules struct{}

func (fakeSchedules) GrantModify(g awsiam.IGrantable) awsiam.Grant {
	return awsiam.Grant_Drop(g, jsii.String("modify schedules"))
}
func (fakeSchedules) GrantManageSchedules(g awsiam.IGrantable) awsiam.Grant {
	return awsiam.Grant_Drop(g, jsii.String("manage schedules"))
}
func (fakeSchedules) GrantRead(g awsiam.IGrantable) awsiam.Grant {
	return awsiam.Grant_Drop(g, jsii.String("read"))
}

func (fakeSchedules) GrantListSchedules(g awsiam.IGrantable) awsiam.Grant {
	return awsiam.Grant_Drop(g, jsii.String("list schedules"))
}
func (fakeSchedules) Environment() map[string]string {
	return map[string]string{"SCHEDULE_GROUP": "g"}
}

// panicText runs f and returns what it panicked with ("" if nothing).
func panicText(f func()) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprint(r)
		}
	}()
	f()
	return ""
}

func TestCancellationValidation(t *testing.T) {
	app := NewApp(t, nil)
	stack := awscdk.NewStack(app, jsii.String("Validation"), nil)
	attr := func(n string) *awsdynamodb.Attribute {
		return &awsdynamodb.Attribute{Name: jsii.String(n), Type: awsdynamodb.AttributeType_STRING}
	}
	streamed := awsdynamodb.NewTable(stack, jsii.String("Streamed"), &awsdynamodb.TableProps{
		PartitionKey: attr("userId"), SortKey: attr("taskId"), Stream: awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
	})
	plain := awsdynamodb.NewTable(stack, jsii.String("Plain"), &awsdynamodb.TableProps{PartitionKey: attr("userId")})
	keysOnly := awsdynamodb.NewTable(stack, jsii.String("KeysOnly"), &awsdynamodb.TableProps{
		PartitionKey: attr("userId"), SortKey: attr("taskId"), Stream: awsdynamodb.StreamViewType_KEYS_ONLY,
	})
	otherKeys := awsdynamodb.NewTable(stack, jsii.String("Jobs"), &awsdynamodb.TableProps{
		PartitionKey: attr("tenantId"), SortKey: attr("jobId"), Stream: awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
	})
	fifo := awssqs.Queue_FromQueueArn(stack, jsii.String("Fifo"), jsii.String("arn:aws:sqs:eu-west-1:111111111111:work.fifo"))
	standard := awssqs.Queue_FromQueueArn(stack, jsii.String("Standard"), jsii.String("arn:aws:sqs:eu-west-1:111111111111:work"))
	valid := func(edit func(p *cancellation.CancellationProps)) *cancellation.CancellationProps {
		p := &cancellation.CancellationProps{Table: streamed, Timer: fakeSchedules{}, Schema: tableschema.Todo()}
		edit(p)
		return p
	}
	type props = cancellation.CancellationProps
	for i, tc := range []struct {
		name  string
		props *props
		want  []string
	}{
		{"no props", nil, []string{"props are required"}},
		{"no table", valid(func(p *props) { p.Table = nil }), []string{"Table is required"}},
		{"table without a stream", valid(func(p *props) { p.Table = plain }),
			[]string{"has no stream", "NEW_AND_OLD_IMAGES"}},
		{"table with a keys-only stream", valid(func(p *props) { p.Table = keysOnly }),
			[]string{"has a KEYS_ONLY stream", "set its stream view to NEW_AND_OLD_IMAGES"}},
		{"table keyed otherwise than the schema", valid(func(p *props) { p.Table = otherKeys }),
			[]string{"is keyed tenantId/jobId but Schema says userId/taskId", `set Schema.PartitionKey to "tenantId" and Schema.SortKey to "jobId"`}},
		{"no timer", valid(func(p *props) { p.Timer = nil }), []string{"Timer is required"}},
		{"invalid schema", valid(func(p *props) { p.Schema = contract.Schema{StateAttr: "state", FiredState: "Pending"} }),
			[]string{"Schema:", `FiredState "Pending" must be a non-empty state outside ArmedStates`}},
		{"zero stream retries (pointer: not the default)", valid(func(p *props) { p.RetryAttempts = jsii.Number(0) }),
			[]string{"RetryAttempts must be a whole number between 1 and 10000 inclusive (given 0)", "bisecting needs at least one"}},
		{"negative retries", valid(func(p *props) { p.RetryAttempts = jsii.Number(-1) }),
			[]string{"RetryAttempts", "(given -1)"}},
		{"worker batch above the FIFO limit", valid(func(p *props) { p.WorkerBatchSize = 11 }),
			[]string{"WorkerBatchSize must be a whole number between 1 and 10 inclusive (given 11)"}},
		{"worker concurrency below the event source's minimum", valid(func(p *props) { p.WorkerMaxConcurrency = 1 }),
			[]string{"WorkerMaxConcurrency must be a whole number between 2 and 1000 inclusive (given 1)"}},
		{"worker concurrency above the maximum", valid(func(p *props) { p.WorkerMaxConcurrency = 1001 }),
			[]string{"WorkerMaxConcurrency", "(given 1001)"}},
		{"stream batch not whole", valid(func(p *props) { p.BatchSize = 2.5 }),
			[]string{"BatchSize must be a whole number", "(given 2.5)"}},
		{"record age under a minute", valid(func(p *props) { p.MaxRecordAge = awscdk.Duration_Seconds(jsii.Number(30)) }),
			[]string{"MaxRecordAge must be a whole number of seconds between 60 and 86400", "(given 30 seconds)"}},
		{"receive count above SQS's limit", valid(func(p *props) { p.MaxReceiveCount = 1001 }),
			[]string{"MaxReceiveCount", "between 1 and 1000", "(given 1001)"}},
		{"worker timeout above Lambda's limit", valid(func(p *props) { p.WorkerTimeout = awscdk.Duration_Seconds(jsii.Number(901)) }),
			[]string{"WorkerTimeout must be a whole number of seconds", "(given 15 minutes 1 second)"}},
		{"existing queue and queue props", valid(func(p *props) { p.ExistingQueue = fifo; p.QueueProps = &awssqs.QueueProps{} }),
			[]string{"ExistingQueue and QueueProps are both set"}},
		{"existing queue not FIFO", valid(func(p *props) { p.ExistingQueue = standard }),
			[]string{"ExistingQueue must be a FIFO queue"}},
		{"existing dead-letter queue not FIFO", valid(func(p *props) { p.ExistingDeadLetterQueue = standard }),
			[]string{"ExistingDeadLetterQueue must be a FIFO queue"}},
		{"existing dead-letter queue and its props", valid(func(p *props) {
			p.ExistingDeadLetterQueue = fifo
			p.DeadLetterQueueProps = &awssqs.QueueProps{}
		}), []string{"ExistingDeadLetterQueue and DeadLetterQueueProps are both set"}},
		{"dead-letter props with an existing queue", valid(func(p *props) { p.ExistingQueue = fifo; p.DeadLetterQueueProps = &awssqs.QueueProps{} }),
			[]string{"DeadLetterQueueProps is set with ExistingQueue"}},
		{"FIFO stream failure queue", valid(func(p *props) { p.ExistingStreamFailureQueue = fifo }),
			[]string{"ExistingStreamFailureQueue must be a standard queue"}},
		{"stream failure queue and its props", valid(func(p *props) {
			p.ExistingStreamFailureQueue = standard
			p.StreamFailureQueueProps = &awssqs.QueueProps{}
		}), []string{"ExistingStreamFailureQueue and StreamFailureQueueProps are both set"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			WantPanic(t, func() { cancellation.NewCancellation(stack, jsii.String(fmt.Sprint("C", i)), tc.props) }, tc.want...)
		})
	}
}

// customStack is a fresh app with bundling skipped (the functions are not
// built), for constructs built with non-default props.
func customStack(t *testing.T, id string) awscdk.Stack {
	t.Helper()
	app := NewApp(t, map[string]any{"aws:cdk:bundling-stacks": []string{}})
	return awscdk.NewStack(app, jsii.String(id), nil)
}

// synthOf synthesizes a custom stack.
func synthOf(t *testing.T, stack awscdk.Stack) *synthed {
	t.Helper()
	var s *synthed
	Check(t, func() {
		tpl := assertions.Template_FromStack(stack, nil)
		s = &synthed{tpl: tpl, json: *tpl.ToJSON()}
	})
	return s
}

func TestCancellationOnAnImportedTableWithCustomProps(t *testing.T) {
	stack := customStack(t, "Custom")
	table := awsdynamodb.Table_FromTableAttributes(stack, jsii.String("Imported"), &awsdynamodb.TableAttributes{
		TableArn:       jsii.String("arn:aws:dynamodb:eu-west-1:111111111111:table/things"),
		TableStreamArn: jsii.String("arn:aws:dynamodb:eu-west-1:111111111111:table/things/stream/2030-01-01T00:00:00.000"),
	})
	receives := awscdk.NewCfnParameter(stack, jsii.String("Receives"), &awscdk.CfnParameterProps{Type: jsii.String("Number")})
	var c *cancellation.Cancellation
	Check(t, func() {
		c = cancellation.NewCancellation(stack, jsii.String("Pipeline"), &cancellation.CancellationProps{
			Table: table, Timer: fakeSchedules{},
			BatchSize: 100, MaxRecordAge: awscdk.Duration_Minutes(jsii.Number(10)), RetryAttempts: jsii.Number(3),
			WorkerBatchSize: 5, WorkerMaxConcurrency: 4, WorkerTimeout: awscdk.Duration_Seconds(jsii.Number(20)),
			MaxReceiveCount: *receives.ValueAsNumber(), // a token: not validated
		})
	})
	s := synthOf(t, stack)
	m := s.mappingOf(t, *stack.GetLogicalId(c.Processor.Function.Node().DefaultChild().(awscdk.CfnElement)))
	want := map[string]any{"BatchSize": 100.0, "MaximumRecordAgeInSeconds": 600.0, "MaximumRetryAttempts": 3.0,
		"EventSourceArn": "arn:aws:dynamodb:eu-west-1:111111111111:table/things/stream/2030-01-01T00:00:00.000"}
	for k, v := range want {
		if JSON(m[k]) != JSON(v) {
			t.Errorf("stream mapping %s = %s, want %s", k, JSON(m[k]), JSON(v))
		}
	}
	w := s.mappingOf(t, *stack.GetLogicalId(c.Worker.Function.Node().DefaultChild().(awscdk.CfnElement)))
	if w["BatchSize"] != 5.0 || JSON(w["ScalingConfig"]) != JSON(map[string]any{"MaximumConcurrency": 4}) {
		t.Errorf("worker mapping %s", JSON(w))
	}
	q := Props(s.Resources("AWS::SQS::Queue")[*stack.GetLogicalId(c.Queue.Node().DefaultChild().(awscdk.CfnElement))])
	if q["VisibilityTimeout"] != 120.0 {
		t.Errorf("visibility timeout %v, want 6 × 20", q["VisibilityTimeout"])
	}
	if JSON(q["RedrivePolicy"].(map[string]any)["maxReceiveCount"]) != JSON(ref("Receives")) {
		t.Errorf("maxReceiveCount %s, want the parameter", JSON(q["RedrivePolicy"]))
	}
}
