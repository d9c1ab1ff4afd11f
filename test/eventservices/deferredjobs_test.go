package eventservices

import (
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	dj "github.com/unschedule/unschedule/constructs/deferredjobs"
	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/examples/barbershop/barbershopstack"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// TestDeferredJobsSynth synthesizes the barbershop example and pins the
// items table, the core's TTL timer with the dispatcher as its Target,
// the job queue and the worker, least privilege, and the alarms.
func TestDeferredJobsSynth(t *testing.T) {
	a := barbershopstack.NewStack(newApp(t), "Barbershop")
	template, j := synth(a.Stack)
	tableID, _ := j.one(t, "AWS::DynamoDB::Table", "WeeklyAnalytics")
	dispatcherID, _ := j.one(t, "AWS::Lambda::Function", "WeeklyAnalyticsDispatcher")
	expiryID, expiry := j.one(t, "AWS::Lambda::Function", "WeeklyAnalyticsCoreFire")
	qID, _ := j.one(t, "AWS::SQS::Queue", "WeeklyAnalyticsJobQueue")

	t.Run("cfn-lint", func(t *testing.T) { cfnLint(t, j) })

	t.Run("function variables are envvars names (or the example app's own)", func(t *testing.T) {
		for _, bad := range envvars.Unknown(j) {
			if !strings.HasSuffix(bad, ": APPOINTMENTS_TABLE") { // examples/barbershop's table
				t.Errorf("a function sets a variable not in internal/core/envvars: %s", bad)
			}
		}
	})

	t.Run("items table: the core's, keyed tenantId/window, TTL for the markers, point-in-time recovery", func(t *testing.T) {
		check(t, func() {
			template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
				"TimeToLiveSpecification":          map[string]any{"AttributeName": timerspec.DefaultTTLAttr, "Enabled": true},
				"StreamSpecification":              map[string]any{"StreamViewType": "NEW_AND_OLD_IMAGES"},
				"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
				"BillingMode":                      "PAY_PER_REQUEST",
				"KeySchema": []any{map[string]any{"AttributeName": job.TenantAttr, "KeyType": "HASH"},
					map[string]any{"AttributeName": job.WindowAttr, "KeyType": "RANGE"}},
			})
		})
	})

	t.Run("the armed index: the reconciler and the TTL watch Query it, never scan the table", func(t *testing.T) {
		check(t, func() {
			template.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), map[string]any{
				"GlobalSecondaryIndexes": []any{assertions.Match_ObjectLike(&map[string]any{
					"IndexName": "armed",
					"KeySchema": []any{map[string]any{"AttributeName": job.StateAttr, "KeyType": "HASH"},
						map[string]any{"AttributeName": job.DueAttr, "KeyType": "RANGE"}},
				})},
			})
		})
		for _, fn := range []string{"WeeklyAnalyticsCoreReconcilerFunction", "WeeklyAnalyticsCoreTTLWatch"} {
			acts := actionMap(j.functionStatements(t, fn))
			if !strings.Contains(acts["dynamodb:Query"], "/index/armed") {
				t.Errorf("%s may not Query the armed index: %s", fn, js(acts))
			}
			_, f := j.one(t, "AWS::Lambda::Function", fn)
			if env := js(props(f)["Environment"]); !strings.Contains(env, envvars.ArmedIndex) {
				t.Errorf("%s is not told the armed index: %s", fn, env)
			}
		}
		if acts := actionMap(j.functionStatements(t, "WeeklyAnalyticsCoreTTLWatch")); acts["dynamodb:Scan"] != "" {
			t.Errorf("the TTL watch may scan the table: %s", acts["dynamodb:Scan"])
		}
	})

	t.Run("the core's TTL timer fires the items; the dispatcher is its Target and reads no stream", func(t *testing.T) {
		var ttl, byDispatcher []map[string]any
		for _, m := range j.resources("AWS::Lambda::EventSourceMapping") {
			switch js(props(m)["FunctionName"]) {
			case `{"Ref":"` + expiryID + `"}`:
				ttl = append(ttl, props(m))
			case `{"Ref":"` + dispatcherID + `"}`:
				byDispatcher = append(byDispatcher, props(m))
			}
		}
		if len(byDispatcher) != 0 || len(ttl) != 1 {
			t.Fatalf("mappings: %d to the expiry function, %d to the dispatcher; want the TTL timer's one, and none", len(ttl), len(byDispatcher))
		}
		m := ttl[0]
		if got, want := js(m["FilterCriteria"]), `{"Filters":[{"Pattern":`+js(timerspec.TTLFilterPattern())+`}]}`; got != want {
			t.Fatalf("FilterCriteria %s, want the core's TTL filter %s", got, want)
		}
		failID, _ := j.one(t, "AWS::SQS::Queue", "WeeklyAnalyticsCoreTTLFailureQueue")
		if !strings.Contains(js(m["EventSourceArn"]), tableID) || !strings.Contains(js(m["DestinationConfig"]), failID) {
			t.Fatalf("TTL mapping %s", js(m))
		}
		env := js(props(expiry)["Environment"])
		if !strings.Contains(env, `"TARGET_FUNCTION_ARN":{"Fn::GetAtt":["`+dispatcherID+`","Arn"]}`) {
			t.Fatalf("the expiry function's target is not the dispatcher: %s", env)
		}
		if !strings.Contains(env, `"UNSCHEDULE_ITEM_SCHEMA":`+js(job.Schema().EnvValue())) {
			t.Fatalf("the expiry function's schema is not job.Schema(): %s", env)
		}
		invoke := actionMap(j.functionStatements(t, "WeeklyAnalyticsCoreFire"))["lambda:InvokeFunction"]
		if !strings.Contains(invoke, dispatcherID) || strings.Count(invoke, `"Fn::GetAtt"`) != 2 {
			t.Fatalf("the expiry function invokes %s, want the dispatcher (and its versions) only", invoke)
		}
	})

	t.Run("job queue: encrypted, TLS-only, DLQ; worker with bounded concurrency", func(t *testing.T) {
		_, q := j.one(t, "AWS::SQS::Queue", "WeeklyAnalyticsJobQueue")
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

	t.Run("IAM: the dispatcher sends to the job queue only; the writer creates items only", func(t *testing.T) {
		got := actionMap(j.functionStatements(t, "WeeklyAnalyticsDispatcher"))
		if got["sqs:SendMessage"] != `{"Fn::GetAtt":["`+qID+`","Arn"]}` {
			t.Fatalf("dispatcher sends to %s", got["sqs:SendMessage"])
		}
		for act := range got {
			if strings.HasPrefix(act, "dynamodb:") || strings.HasPrefix(act, "lambda:") {
				t.Fatalf("the dispatcher needs no %s", act)
			}
		}
		book := actionMap(j.functionStatements(t, "Book"))
		var onTable []string
		for act, res := range book {
			if strings.Contains(res, tableID) {
				onTable = append(onTable, act)
			}
		}
		if !slices.Equal(onTable, []string{"dynamodb:PutItem"}) {
			t.Fatalf("the writer may %v on the table (%v), want dynamodb:PutItem only", onTable, book)
		}
		_, fn := j.one(t, "AWS::Lambda::Function", "Book")
		if vars := js(props(fn)["Environment"]); !strings.Contains(vars, `"DEFERRED_JOBS_WEEKLY":"MONDAY 03:00"`) || !strings.Contains(vars, `"DEFERRED_JOBS_TABLE":{"Ref":"`+tableID+`"}`) {
			t.Fatalf("writer env %s", vars)
		}
	})

	t.Run("alarms: job DLQ, dispatcher errors and metrics, the core's TTL timer; Alarms() lists every one", func(t *testing.T) {
		dlqID, _ := j.one(t, "AWS::SQS::Queue", "WeeklyAnalyticsJobDeadLetterQueue")
		for _, m := range []map[string]any{
			{"MetricName": "ApproximateNumberOfMessagesVisible", "Dimensions": []any{map[string]any{"Name": "QueueName", "Value": map[string]any{"Fn::GetAtt": []any{dlqID, "QueueName"}}}}},
			{"Namespace": "AWS/Lambda", "MetricName": "Errors", "Dimensions": []any{map[string]any{"Name": "FunctionName", "Value": map[string]any{"Ref": dispatcherID}}}},
			{"Namespace": metrics.Namespace, "MetricName": job.MetricQueueFailed},
			{"Namespace": metrics.Namespace, "MetricName": job.MetricMalformed,
				"Dimensions": assertions.Match_ArrayWith(&[]any{map[string]any{"Name": "Function", "Value": job.FunctionDispatch}})},
			{"Namespace": metrics.Namespace, "MetricName": metrics.TTLOverdueMarkers},
			{"Namespace": metrics.Namespace, "MetricName": metrics.TTLDispatchFailed},
		} {
			m["Threshold"] = 1
			check(t, func() { template.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), m) })
		}
		listed := map[string]bool{}
		for _, al := range a.Jobs.Alarms() {
			listed[*a.Stack.GetLogicalId(al.Node().DefaultChild().(awscdk.CfnElement))] = true
		}
		if all := j.resources("AWS::CloudWatch::Alarm"); len(listed) != len(all) {
			t.Fatalf("Alarms() lists %d alarms, the template has %d", len(listed), len(all))
		}
		for _, al := range []awscdk.Resource{a.Jobs.JobDeadLetterAlarm, a.Jobs.DispatcherErrorsAlarm, a.Jobs.QueueFailedAlarm, a.Jobs.MalformedAlarm,
			a.Jobs.Timer.TTLOverdueAlarm, a.Jobs.Timer.TTLFailureAlarm} {
			if !listed[*a.Stack.GetLogicalId(al.Node().DefaultChild().(awscdk.CfnElement))] {
				t.Fatalf("Alarms() lacks %s", *al.Node().Path())
			}
		}
	})
}

// TestDeferredJobsExistingResources: ExistingTable and ExistingJobQueue
// are used, not created; the worker reads, and the dispatcher sends to,
// the adopter's queue, and its ExistingJobDeadLetterQueue is alarmed.
func TestDeferredJobsExistingResources(t *testing.T) {
	st := awscdk.NewStack(newApp(t), jsii.String("Existing"), nil)
	table := awsdynamodb.NewTable(st, jsii.String("MyTable"), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String(job.TenantAttr), Type: awsdynamodb.AttributeType_STRING},
		SortKey:             &awsdynamodb.Attribute{Name: jsii.String(job.WindowAttr), Type: awsdynamodb.AttributeType_STRING},
		Stream:              awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
		TimeToLiveAttribute: jsii.String(dj.TTLAttribute),
	})
	dlq := awssqs.NewQueue(st, jsii.String("MyDLQ"), &awssqs.QueueProps{EnforceSSL: jsii.Bool(true)})
	q := awssqs.NewQueue(st, jsii.String("MyJobs"), &awssqs.QueueProps{EnforceSSL: jsii.Bool(true),
		VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(10)), DeadLetterQueue: &awssqs.DeadLetterQueue{Queue: dlq, MaxReceiveCount: jsii.Number(3)}})
	d := dj.NewDeferredJobs(st, jsii.String("DJ"), &dj.DeferredJobsProps{Worker: worker(st),
		ExistingTable: table, ExistingJobQueue: q, ExistingJobDeadLetterQueue: dlq})
	template, j := synth(st)
	for typ, n := range map[string]float64{"AWS::DynamoDB::Table": 1, "AWS::SQS::Queue": 2 + 5} { // + the core's TTL and reconciler failure queues, the pipeline's three
		check(t, func() { template.ResourceCountIs(jsii.String(typ), jsii.Number(n)) })
	}
	tableID, _ := j.one(t, "AWS::DynamoDB::Table", "MyTable")
	qID, _ := j.one(t, "AWS::SQS::Queue", "MyJobs")
	dlqID, _ := j.one(t, "AWS::SQS::Queue", "MyDLQ")
	if got := actionMap(j.functionStatements(t, "DJDispatcher"))["sqs:SendMessage"]; got != `{"Fn::GetAtt":["`+qID+`","Arn"]}` {
		t.Fatalf("dispatcher sends to %s", got)
	}
	_, m := j.one(t, "AWS::Lambda::EventSourceMapping", "WSqsEventSource")
	if !strings.Contains(js(props(m)["EventSourceArn"]), qID) {
		t.Fatalf("worker reads %s", js(props(m)["EventSourceArn"]))
	}
	_, ttl := j.one(t, "AWS::Lambda::EventSourceMapping", "DJCoreTTLMapping")
	if !strings.Contains(js(props(ttl)["EventSourceArn"]), tableID) {
		t.Fatalf("TTL mapping on %s", js(props(ttl)["EventSourceArn"]))
	}
	if d.JobDeadLetterAlarm == nil || !strings.Contains(js(props(j.resources("AWS::CloudWatch::Alarm")[*st.GetLogicalId(d.JobDeadLetterAlarm.Node().DefaultChild().(awscdk.CfnElement))])), dlqID) {
		t.Fatal("the existing dead-letter queue is not alarmed")
	}
}

// TestDeferredJobsValidation: bad props fail with a message that says how
// to fix them.
func TestDeferredJobsValidation(t *testing.T) {
	table := func(st awscdk.Stack) awsdynamodb.ITable {
		return awsdynamodb.NewTable(st, jsii.String("T"), &awsdynamodb.TableProps{
			PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(job.TenantAttr), Type: awsdynamodb.AttributeType_STRING},
			SortKey:      &awsdynamodb.Attribute{Name: jsii.String(job.WindowAttr), Type: awsdynamodb.AttributeType_STRING},
			Stream:       awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
		})
	}
	queue := func(st awscdk.Stack) awssqs.IQueue { return awssqs.NewQueue(st, jsii.String("Q"), nil) }
	for _, tc := range []struct {
		name string
		p    func(st awscdk.Stack) *dj.DeferredJobsProps
		want string
	}{
		{"no worker", func(awscdk.Stack) *dj.DeferredJobsProps { return &dj.DeferredJobsProps{} }, "Worker is required: pass the function"},
		{"bad weekly time", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), RunAt: &job.Weekly{Hour: 24}}
		}, "RunAt: deferred job: invalid: weekly time"},
		{"max concurrency", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), WorkerMaxConcurrency: 1}
		}, "WorkerMaxConcurrency must be a whole number between 2 and 1000"},
		{"lateness below TTL's", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), MaxLateness: awscdk.Duration_Hours(jsii.Number(12))}
		}, "48h0m0s"},
		{"table both ways", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), ExistingTable: table(st), TableProps: &awsdynamodb.TableProps{}}
		}, "ExistingTable and TableProps are both set"},
		{"existing table without TTL", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), ExistingTable: table(st)}
		}, `has no TTL, so the markers of the TTL timer would never expire`},
		{"deletion protection of an existing table", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), ExistingTable: table(st), DeletionProtection: jsii.Bool(true)}
		}, "set it on your table instead"},
		{"table without point-in-time recovery", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), TableProps: &awsdynamodb.TableProps{
				PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{PointInTimeRecoveryEnabled: jsii.Bool(false)}}}
		}, "turns point-in-time recovery off"},
		{"table with another stream", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), TableProps: &awsdynamodb.TableProps{Stream: awsdynamodb.StreamViewType_KEYS_ONLY}}
		}, "TableProps.Stream is the construct's"},
		{"queue both ways", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), ExistingJobQueue: queue(st), JobQueueProps: &awssqs.QueueProps{}}
		}, "ExistingJobQueue and JobQueueProps are both set"},
		{"visibility of an existing queue", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), ExistingJobQueue: queue(st), JobVisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(10))}
		}, "ExistingJobQueue and JobVisibilityTimeout are both set"},
		{"dead letters without the existing queue", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), ExistingJobDeadLetterQueue: queue(st)}
		}, "set ExistingJobQueue too"},
		{"queue without TLS", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), JobQueueProps: &awssqs.QueueProps{EnforceSSL: jsii.Bool(false)}}
		}, "the job queue is TLS-only"},
		{"queue unencrypted", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), JobQueueProps: &awssqs.QueueProps{Encryption: awssqs.QueueEncryption_UNENCRYPTED}}
		}, "turns encryption off"},
		{"queue visibility set twice", func(st awscdk.Stack) *dj.DeferredJobsProps {
			return &dj.DeferredJobsProps{Worker: imported(st), JobQueueProps: &awssqs.QueueProps{VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(10))}}
		}, "set by JobVisibilityTimeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := awscdk.NewStack(newApp(t), jsii.String("S"), nil)
			p := tc.p(st)
			defer func() {
				if r, _ := recover().(string); !strings.Contains(r, tc.want) {
					t.Fatalf("panic %q, want %q", r, tc.want)
				}
			}()
			dj.NewDeferredJobs(st, jsii.String("DJ"), p)
		})
	}
}

func worker(st awscdk.Stack) awslambda.IFunction {
	return gofn.NewFunction(st, jsii.String("W"), &gofn.FunctionProps{Entry: "examples/barbershop/worker"}).Function
}

// imported is a worker that is not built (its timeout is unknown): the
// validation cases need no bundling.
func imported(st awscdk.Stack) awslambda.IFunction {
	return awslambda.Function_FromFunctionArn(st, jsii.String("Imported"), jsii.String("arn:aws:lambda:eu-west-1:111111111111:function:worker"))
}
