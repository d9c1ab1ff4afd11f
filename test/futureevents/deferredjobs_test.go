package futureevents_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	dj "github.com/unschedule/unschedule/constructs/deferredjobs"
	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/deferredjobs"
	"github.com/unschedule/unschedule/examples/barbershop/stack"
	"github.com/unschedule/unschedule/internal/envvars"
	"github.com/unschedule/unschedule/internal/metrics"
)

// TestDeferredJobsSynth synthesizes the barbershop example and pins the
// marker table, the filtered stream mapping, the queues, IAM and alarms.
func TestDeferredJobsSynth(t *testing.T) {
	a := stack.NewStack(newApp(t), "Barbershop")
	template, j := synth(a.Stack)
	tableID, _ := j.one(t, "AWS::DynamoDB::Table", "WeeklyAnalytics")

	t.Run("cfn-lint", func(t *testing.T) { cfnLint(t, j) })

	t.Run("function variables are envvars names (or the example app's own)", func(t *testing.T) {
		for _, bad := range envvars.Unknown(j) {
			if !strings.HasSuffix(bad, ": APPOINTMENTS_TABLE") { // examples/barbershop's table
				t.Errorf("a function sets a variable not in internal/envvars: %s", bad)
			}
		}
	})

	t.Run("marker table: TTL on expiresAt, KEYS_ONLY stream", func(t *testing.T) {
		check(t, func() {
			template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
				"TimeToLiveSpecification": map[string]any{"AttributeName": "expiresAt", "Enabled": true},
				"StreamSpecification":     map[string]any{"StreamViewType": "KEYS_ONLY"},
				"KeySchema": []any{map[string]any{"AttributeName": "tenantId", "KeyType": "HASH"},
					map[string]any{"AttributeName": "window", "KeyType": "RANGE"}},
			})
		})
	})

	t.Run("stream mapping: filtered to TTL deletions, bounded retries, failure queue", func(t *testing.T) {
		dispatcherID, _ := j.one(t, "AWS::Lambda::Function", "WeeklyAnalyticsDispatcher")
		var found map[string]any
		for _, m := range j.resources("AWS::Lambda::EventSourceMapping") {
			if js(props(m)["FunctionName"]) == `{"Ref":"`+dispatcherID+`"}` {
				found = props(m)
			}
		}
		if found == nil {
			t.Fatal("no mapping for the dispatcher")
		}
		// The exact pattern the dynalite test evaluates
		// (internal/deferredjobs TestTTLFilterAgainstDynalite).
		wantFilter := `{"Filters":[{"Pattern":` + js(deferredjobs.TTLDeleteFilterJSON()) + `}]}`
		if got := js(found["FilterCriteria"]); got != wantFilter {
			t.Fatalf("FilterCriteria %s, want %s", got, wantFilter)
		}
		if !strings.Contains(deferredjobs.TTLDeleteFilterJSON(), `"principalId":["dynamodb.amazonaws.com"]`) ||
			!strings.Contains(deferredjobs.TTLDeleteFilterJSON(), `"type":["Service"]`) {
			t.Fatal("the filter must select userIdentity type Service, principal dynamodb.amazonaws.com")
		}
		if !strings.Contains(js(found["EventSourceArn"]), tableID) || found["StartingPosition"] != "TRIM_HORIZON" ||
			found["BatchSize"] != 100.0 || found["ParallelizationFactor"] != 1.0 || found["MaximumRetryAttempts"] != 10.0 ||
			found["BisectBatchOnFunctionError"] != true || js(found["FunctionResponseTypes"]) != `["ReportBatchItemFailures"]` {
			t.Fatalf("mapping %s", js(found))
		}
		failID, _ := j.one(t, "AWS::SQS::Queue", "WeeklyAnalyticsStreamFailureQueue")
		if !strings.Contains(js(found["DestinationConfig"]), failID) {
			t.Fatalf("on-failure %s", js(found["DestinationConfig"]))
		}
	})

	t.Run("job queue: encrypted, TLS-only, DLQ; worker with bounded concurrency", func(t *testing.T) {
		qID, q := j.one(t, "AWS::SQS::Queue", "WeeklyAnalyticsJobQueue")
		dlqID, dlq := j.one(t, "AWS::SQS::Queue", "WeeklyAnalyticsJobDeadLetterQueue")
		if props(q)["SqsManagedSseEnabled"] != true || props(dlq)["SqsManagedSseEnabled"] != true {
			t.Fatal("queues must be encrypted")
		}
		if props(q)["VisibilityTimeout"] != 180.0 {
			t.Fatalf("visibility timeout %v, want 180 (six times a 30 s worker)", props(q)["VisibilityTimeout"])
		}
		if rp := js(props(q)["RedrivePolicy"]); !strings.Contains(rp, dlqID) || !strings.Contains(rp, `"maxReceiveCount":5`) {
			t.Fatalf("redrive %s", rp)
		}
		for _, id := range []string{qID, dlqID} {
			tls := false
			for _, p := range j.resources("AWS::SQS::QueuePolicy") {
				doc := js(props(p))
				if strings.Contains(js(props(p)["Queues"]), id) && strings.Contains(doc, `"aws:SecureTransport":"false"`) && strings.Contains(doc, `"Effect":"Deny"`) {
					tls = true
				}
			}
			if !tls {
				t.Fatalf("queue %s is not TLS-only", id)
			}
		}
		workerID, _ := j.one(t, "AWS::Lambda::Function", "Analytics")
		check(t, func() {
			template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
				"FunctionName":          map[string]any{"Ref": workerID},
				"EventSourceArn":        map[string]any{"Fn::GetAtt": []any{qID, "Arn"}},
				"ScalingConfig":         map[string]any{"MaximumConcurrency": 5},
				"BatchSize":             1,
				"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			})
		})
	})

	t.Run("IAM: dispatcher sends to the job queue and its failure queue only; writer puts markers only", func(t *testing.T) {
		qID, _ := j.one(t, "AWS::SQS::Queue", "WeeklyAnalyticsJobQueue")
		failID, _ := j.one(t, "AWS::SQS::Queue", "WeeklyAnalyticsStreamFailureQueue")
		got := actionMap(j.functionStatements(t, "WeeklyAnalyticsDispatcher"))
		// The mapping's on-failure destination is sent to with the
		// function's role, so it needs the failure queue too.
		if got["sqs:SendMessage"] != `{"Fn::GetAtt":["`+qID+`","Arn"]}+{"Fn::GetAtt":["`+failID+`","Arn"]}` {
			t.Fatalf("dispatcher sends to %s", got["sqs:SendMessage"])
		}
		for act, res := range got {
			// ListStreams takes no resource; CDK grants it on "*" for every
			// stream mapping.
			if strings.HasPrefix(act, "dynamodb:") && act != "dynamodb:ListStreams" && !strings.Contains(res, tableID) {
				t.Fatalf("%s on %s", act, res)
			}
			if act == "dynamodb:PutItem" || act == "dynamodb:DeleteItem" || act == "lambda:InvokeFunction" {
				t.Fatalf("the dispatcher needs no %s", act)
			}
		}
		book := actionMap(j.functionStatements(t, "Book"))
		if !strings.Contains(book["dynamodb:PutItem"], tableID) || book["dynamodb:DeleteItem"] != "" || book["dynamodb:Scan"] != "" {
			t.Fatalf("writer %v", book)
		}
		_, fn := j.one(t, "AWS::Lambda::Function", "Book")
		if vars := js(props(fn)["Environment"]); !strings.Contains(vars, `"DEFERRED_JOBS_WEEKLY":"MONDAY 03:00"`) || !strings.Contains(vars, `"DEFERRED_JOBS_TABLE":{"Ref":"`+tableID+`"}`) {
			t.Fatalf("writer env %s", vars)
		}
	})

	t.Run("alarms: job DLQ, stream failures, dispatcher errors and its metrics", func(t *testing.T) {
		dlqID, _ := j.one(t, "AWS::SQS::Queue", "WeeklyAnalyticsJobDeadLetterQueue")
		failID, _ := j.one(t, "AWS::SQS::Queue", "WeeklyAnalyticsStreamFailureQueue")
		for _, m := range []map[string]any{
			{"MetricName": "ApproximateNumberOfMessagesVisible", "Dimensions": []any{map[string]any{"Name": "QueueName", "Value": map[string]any{"Fn::GetAtt": []any{dlqID, "QueueName"}}}}},
			{"MetricName": "ApproximateNumberOfMessagesVisible", "Dimensions": []any{map[string]any{"Name": "QueueName", "Value": map[string]any{"Fn::GetAtt": []any{failID, "QueueName"}}}}},
			{"Namespace": "AWS/Lambda", "MetricName": "Errors"},
			{"Namespace": metrics.Namespace, "MetricName": metrics.DeferredJobsQueueFailed},
			{"Namespace": metrics.Namespace, "MetricName": metrics.DeferredJobsMalformed,
				"Dimensions": assertions.Match_ArrayWith(&[]any{map[string]any{"Name": "Function", "Value": metrics.FunctionDeferredDispatch}})},
		} {
			m["Threshold"] = 1
			check(t, func() { template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), m) })
		}
	})
}

// TestDeferredJobsValidation: bad props fail with a message that says how
// to fix them.
func TestDeferredJobsValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    func(st awscdk.Stack) *dj.DeferredJobsProps
		want string
	}{
		{"no worker", func(awscdk.Stack) *dj.DeferredJobsProps { return &dj.DeferredJobsProps{} }, "Worker is required"},
		{"max concurrency", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: worker(st), WorkerMaxConcurrency: 1}
		}, "WorkerMaxConcurrency must be a whole number between 2 and 1000"},
		{"parallelization", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: worker(st), StreamParallelizationFactor: 11}
		}, "StreamParallelizationFactor must be a whole number between 1 and 10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := awscdk.NewStack(newApp(t), jsii.String("S"), nil)
			p := tc.p(st)
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), tc.want) {
					t.Fatalf("panic %v, want %q", r, tc.want)
				}
			}()
			dj.NewDeferredJobs(st, jsii.String("DJ"), p)
		})
	}
}

func worker(st awscdk.Stack) awslambda.IFunction {
	return gofn.NewFunction(st, jsii.String("W"), &gofn.FunctionProps{Entry: "examples/barbershop/worker"}).Function
}
