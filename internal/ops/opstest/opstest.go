// Package opstest builds, on moto and dynalite, a stack shaped as the
// synthesized Unschedule stack (the same logical ids, function
// environment, queues, event source mappings and on-failure
// destinations), for the tests of internal/ops. It starts no server: the
// tests pass theirs (Servers), so the operator command imports none of
// the repository's tooling.
package opstest

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/deferredjobs/job"
	"github.com/unschedule/unschedule/futureevents/futureevent"
	"github.com/unschedule/unschedule/internal/campaigns/adapters/campaigntable"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntimer"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/ops"
	"github.com/unschedule/unschedule/internal/todo/adapters/tasktable"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
)

// StackName is the fixture stack's name.
const StackName = "Unschedule-test"

// The physical names the fixture gives.
const (
	TaskTable = "Unschedule-test-TaskTable"
	Group     = "Unschedule-test-Tasks-ScheduleGroup"
	// CampaignTable and CampaignGroup are the campaigns' table and
	// schedule group.
	CampaignTable = "Unschedule-test-CampaignTable"
	CampaignGroup = "Unschedule-test-Campaigns-ScheduleGroup"
	// FutureEventsTable is constructs/futureevents' table, on the Step
	// Functions timer (FutureEventsMachine); DeferredJobsTable is
	// constructs/deferredjobs', on the TTL timer.
	FutureEventsTable   = "Unschedule-test-FutureEventsTable"
	FutureEventsMachine = "Unschedule-test-FutureEvents-Timer"
	DeferredJobsTable   = "Unschedule-test-DeferredJobsTable"
)

// Fixture is the fixture stack, discovered, and its clients.
type Fixture struct {
	World *ops.World
	Tasks *tasktable.Store
	Sched *scheduler.Client
	SQS   *sqs.Client
	// Invoked records the invokes of a redrive or a repair (moto runs no
	// function without Docker).
	Invoked *Invokes
}

// Invokes is a Lambda client whose Invoke is recorded, not made.
type Invokes struct {
	ops.Lambda
	Calls []lambda.InvokeInput
	// Fail, when set, is every Invoke's error (a target that cannot be
	// reached); the call is not recorded.
	Fail error
	// fires run the firing functions' work for their synchronous invokes
	// (the reconciler firing through one), by their ARN.
	fires map[string]fire.Firing
}

// Invoke records the call, or fails with Fail. A synchronous invoke of a
// firing function claims and delivers its item, as the function does
// around its target (which runs inside it, and here does nothing).
func (i *Invokes) Invoke(ctx context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	if i.Fail != nil {
		return nil, i.Fail
	}
	i.Calls = append(i.Calls, *in)
	f, ok := i.fires[aws.ToString(in.FunctionName)]
	if !ok || in.InvocationType != lambdatypes.InvocationTypeRequestResponse {
		return &lambda.InvokeOutput{StatusCode: 202}, nil
	}
	p, err := f.Core.Schema().DecodePayload(in.Payload)
	if err == nil {
		_, err = f.Fire(ctx, p)
	}
	if err != nil {
		return &lambda.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"), Payload: []byte(err.Error())}, nil
	}
	return &lambda.InvokeOutput{StatusCode: 200, Payload: []byte("null")}, nil
}

// firings are the firing core of each function that a reconciler of st
// fires through (FIRE_FUNCTION_ARN), on its table, with a target that
// does nothing.
func firings(st ops.Stack, ddb *dynamodb.Client, now func() time.Time) (map[string]fire.Firing, error) {
	out := map[string]fire.Firing{}
	for _, r := range st.Functions {
		arn := r.Env[envvars.FireFunctionArn]
		for _, f := range st.Functions {
			if arn == "" || f.ARN != arn {
				continue
			}
			get := func(k string) string { return f.Env[k] }
			e := lambdaenv.New(get)
			table, schema := e.Require(envvars.Table), e.Schema()
			if err := e.Err(); err != nil {
				return nil, err
			}
			store, err := dynamo.NewItemStore(ddb, table, schema)
			if err != nil {
				return nil, err
			}
			core, err := fire.New(fire.Config{Schema: schema, Store: store, Now: now, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				return nil, err
			}
			out[arn] = fire.Firing{Core: core, Target: fire.DeliverFunc(func(context.Context, contract.Payload) error { return nil })}
		}
	}
	return out, nil
}

// StreamFailure is a stream mapping's on-failure record, as Lambda sends
// it (https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html):
// a shard and a range of sequence numbers, no item.
func StreamFailure(shard, from, to string) string {
	return `{"requestContext":{"requestId":"r-` + from + `","functionArn":"arn:aws:lambda:us-east-1:123456789012:function:processor","condition":"RetryAttemptsExhausted","approximateInvokeCount":6},` +
		`"responseContext":{"statusCode":200,"functionError":"Unhandled"},"version":"1.0","timestamp":"2030-01-01T13:00:00.000Z",` +
		`"DDBStreamBatchInfo":{"shardId":"` + shard + `","startSequenceNumber":"` + from + `","endSequenceNumber":"` + to + `",` +
		`"approximateArrivalOfFirstRecord":"2030-01-01T12:00:00Z","approximateArrivalOfLastRecord":"2030-01-01T12:00:00Z","batchSize":2,"streamArn":"arn:stream"}}`
}

// template is the fixture's CloudFormation template: the synthesized
// stack's item table, queues and functions, with their logical ids.
func template(timer timerspec.Name, stateMachine, eventsMachine string) string {
	schema := tableschema.Todo().EnvValue()
	fn := func(env map[string]any) map[string]any {
		env[envvars.MetricsStack] = StackName
		return map[string]any{"Type": "AWS::Lambda::Function", "Properties": map[string]any{
			"Runtime": "provided.al2023", "Handler": "bootstrap", "Role": map[string]any{"Fn::GetAtt": []string{"Role", "Arn"}},
			"Code":        map[string]any{"ZipFile": "placeholder"},
			"Environment": map[string]any{"Variables": env}}}
	}
	arn := func(id string) map[string]any { return map[string]any{"Fn::GetAtt": []string{id, "Arn"}} }
	ref := func(id string) map[string]any { return map[string]any{"Ref": id} }
	timerEnv := func(env map[string]any) map[string]any {
		env[envvars.ItemSchema] = schema
		if timer == timerspec.StepFunctions {
			env[envvars.TimerKind], env[envvars.StateMachineArn] = string(timer), stateMachine
			return env
		}
		env[envvars.ScheduleGroup] = Group
		env[envvars.ScheduleTargetArn] = arn("TasksFireFunctionEC3DFAB6")
		env[envvars.SchedulerRoleArn] = arn("Role")
		env[envvars.SchedulerDLQArn] = arn("TasksScheduleDeadLetterQueue468802E7")
		env[envvars.ItemSchema] = schema
		return env
	}
	itemTable := func(name string, s contract.Schema) map[string]any {
		keys := []any{map[string]any{"AttributeName": s.PartitionKey, "KeyType": "HASH"}}
		defs := []any{map[string]any{"AttributeName": s.PartitionKey, "AttributeType": "S"}}
		if !s.NoSortKey {
			keys = append(keys, map[string]any{"AttributeName": s.SortKey, "KeyType": "RANGE"})
			defs = append(defs, map[string]any{"AttributeName": s.SortKey, "AttributeType": "S"})
		}
		return map[string]any{"Type": "AWS::DynamoDB::Table", "Properties": map[string]any{"TableName": name,
			"BillingMode": "PAY_PER_REQUEST", "KeySchema": keys, "AttributeDefinitions": defs}}
	}
	queue := func(props map[string]any) map[string]any {
		return map[string]any{"Type": "AWS::SQS::Queue", "Properties": props}
	}
	res := map[string]any{
		"Role": map[string]any{"Type": "AWS::IAM::Role", "Properties": map[string]any{
			"AssumeRolePolicyDocument": map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
				"Effect": "Allow", "Principal": map[string]any{"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}}}}},
		"TasksTable45D1B62D": map[string]any{"Type": "AWS::DynamoDB::Table", "Properties": map[string]any{
			"TableName": TaskTable, "BillingMode": "PAY_PER_REQUEST",
			"KeySchema":            []any{map[string]any{"AttributeName": "userId", "KeyType": "HASH"}, map[string]any{"AttributeName": "taskId", "KeyType": "RANGE"}},
			"AttributeDefinitions": []any{map[string]any{"AttributeName": "userId", "AttributeType": "S"}, map[string]any{"AttributeName": "taskId", "AttributeType": "S"}},
			"StreamSpecification":  map[string]any{"StreamViewType": "NEW_AND_OLD_IMAGES"}}},
		"TasksExpiryFailureQueueEAF54407":      queue(map[string]any{"QueueName": "Unschedule-test-ExpiryFailures"}),
		"TasksScheduleDeadLetterQueue468802E7": queue(map[string]any{"QueueName": "Unschedule-test-ScheduleDeadLetters"}),
		"CancellationDeadLetterQueueA91CE624":  queue(map[string]any{"QueueName": "Unschedule-test-CancellationDLQ.fifo", "FifoQueue": true}),
		"CancellationQueueB88B88EE": queue(map[string]any{"QueueName": "Unschedule-test-Cancellation.fifo", "FifoQueue": true,
			"RedrivePolicy": map[string]any{"deadLetterTargetArn": arn("CancellationDeadLetterQueueA91CE624"), "maxReceiveCount": 5}}),
		"CancellationStreamFailureQueueF79B49F2": queue(map[string]any{"QueueName": "Unschedule-test-StreamFailures"}),
		// The to-do app's firing function (lambdas/todofire): its target
		// runs inside it, so it names no TARGET_FUNCTION_ARN, and the
		// reconciler fires through it (FIRE_FUNCTION_ARN).
		"TasksFireFunctionEC3DFAB6": fn(map[string]any{envvars.Table: TaskTable, envvars.ItemSchema: schema, envvars.FireLeaseSeconds: "60"}),
		"TasksReconcilerFunctionB80A55FA": fn(timerEnv(map[string]any{envvars.Table: TaskTable, envvars.BudgetSec: "240", envvars.ArmedIndex: tableschema.PendingArmedIndex().EnvValue(),
			envvars.FireFunctionArn: arn("TasksFireFunctionEC3DFAB6"), envvars.GraceSec: "300"})),
		"CancellationProcessorC2A9BB34": fn(map[string]any{envvars.QueueURL: ref("CancellationQueueB88B88EE"), envvars.ItemSchema: schema}),
		"CancellationWorker966175FC":    fn(timerEnv(map[string]any{})),
		"CampaignsSendDeadLetterQueue":  queue(map[string]any{"QueueName": "Unschedule-test-CampaignScheduleDeadLetters"}),
		"CampaignsApiHandler": fn(map[string]any{campaignenv.CampaignTable: CampaignTable, envvars.ItemSchema: campaign.TaskSchema.EnvValue(),
			envvars.ScheduleGroup: CampaignGroup, envvars.ScheduleTargetArn: arn("CampaignsSendFunction4D2A6B8C"),
			envvars.SchedulerRoleArn: arn("Role"), envvars.SchedulerDLQArn: arn("CampaignsSendDeadLetterQueue")}),
		// The campaign reconciler, as constructs/campaigns sets it: the
		// campaign table, the send function, the sender, the bound timer.
		"CampaignsSendFunction4D2A6B8C": fn(map[string]any{campaignenv.CampaignTable: CampaignTable}),
		"CampaignsReconcilerFunction9E1C3A5B": fn(map[string]any{campaignenv.CampaignTable: CampaignTable, envvars.ItemSchema: campaign.TaskSchema.EnvValue(),
			envvars.ScheduleGroup: CampaignGroup, envvars.ScheduleTargetArn: arn("CampaignsSendFunction4D2A6B8C"),
			envvars.SchedulerRoleArn: arn("Role"), envvars.SchedulerDLQArn: arn("CampaignsSendDeadLetterQueue"),
			campaignenv.SendFunctionArn: arn("CampaignsSendFunction4D2A6B8C"), campaignenv.SenderAddress: "news@example.com"}),
		"CampaignTable1F3B5D7E": itemTable(CampaignTable, campaign.TaskSchema),
		// constructs/futureevents: its table, its handler (TABLE_NAME
		// without the schema) and its core's reconciler and worker on the
		// Step Functions timer.
		"FutureEventsTable6A0E9B1C":   itemTable(FutureEventsTable, futureevent.Schema()),
		"FutureEventsHandler3C1D0F2B": fn(map[string]any{envvars.Table: FutureEventsTable, futureevent.EnvTargetFunctionArns: ""}),
		"FutureEventsCoreReconcilerFunction5E7A9C1D": fn(map[string]any{envvars.Table: FutureEventsTable,
			envvars.ItemSchema: futureevent.Schema().EnvValue(), envvars.BudgetSec: "240", envvars.GraceSec: "300",
			envvars.TargetFunctionArn: arn("FutureEventsHandler3C1D0F2B"),
			envvars.TimerKind:         string(timerspec.StepFunctions), envvars.StateMachineArn: eventsMachine}),
		// constructs/deferredjobs: its table and its core's reconciler on
		// the TTL timer (markers in the table itself).
		"DeferredJobsTable8C2D1F3A":      itemTable(DeferredJobsTable, job.Schema()),
		"DeferredJobsDispatcher7B3E5A2C": fn(map[string]any{job.EnvJobQueueURL: "https://sqs.invalid/jobs"}),
		"DeferredJobsCoreReconcilerFunction2F4B6D8E": fn(map[string]any{envvars.Table: DeferredJobsTable,
			envvars.ItemSchema: job.Schema().EnvValue(), envvars.BudgetSec: "240", envvars.GraceSec: "300",
			envvars.TargetFunctionArn: arn("DeferredJobsDispatcher7B3E5A2C"),
			envvars.TimerKind:         string(timerspec.TTL), envvars.TTLAttribute: timerspec.DefaultTTLAttr}),
		"CancellationWorkerSqsEventSource": map[string]any{"Type": "AWS::Lambda::EventSourceMapping", "Properties": map[string]any{
			"EventSourceArn": arn("CancellationQueueB88B88EE"), "FunctionName": ref("CancellationWorker966175FC"), "BatchSize": 10,
			// Disabled: moto would run the (absent) worker on every send.
			"Enabled": false}},
	}
	b, _ := json.Marshal(map[string]any{"AWSTemplateFormatVersion": "2010-09-09", "Resources": res})
	return string(b)
}

// Servers are what the fixture stack is built on, started by the test
// (internal/tooling/testenv in internal/ops' tests).
type Servers struct {
	// AWS reaches an empty moto account: its region, endpoint and
	// credentials.
	AWS aws.Config
	// DDB is a dynalite that holds the stack's item tables, empty and
	// declared as the constructs declare them: TaskTable, CampaignTable,
	// FutureEventsTable and DeferredJobsTable.
	DDB *dynamodb.Client
}

// New builds the fixture stack on s, and discovers it as the command
// does. Its timer is EventBridge Scheduler.
func New(t testing.TB, now time.Time, s Servers) *Fixture {
	t.Helper()
	return NewOn(t, now, timerspec.EventBridgeScheduler, s)
}

// StateMachine is the Step Functions timer's state machine's name.
const StateMachine = "Unschedule-test-Timer"

// NewOn is New on the timer tm: EventBridge Scheduler or Step Functions
// (a state machine that waits, as the construct's does).
func NewOn(t testing.TB, now time.Time, tm timerspec.Name, s Servers) *Fixture {
	t.Helper()
	ctx := context.Background()
	cfg, ddb := s.AWS, s.DDB
	cfn := cloudformation.NewFromConfig(cfg)
	newMachine := func(name string) string {
		sm, err := sfn.NewFromConfig(cfg).CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name),
			RoleArn: aws.String("arn:aws:iam::123456789012:role/sfn"),
			Definition: aws.String(`{"StartAt":"` + timerspec.WaitState + `","States":{"` + timerspec.WaitState +
				`":{"Type":"Wait","TimestampPath":"` + timerspec.TimestampPath + `","End":true}}}`)})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(sm.StateMachineArn)
	}
	machine := ""
	if tm == timerspec.StepFunctions {
		machine = newMachine(StateMachine)
	}
	events := newMachine(FutureEventsMachine)
	if _, err := cfn.CreateStack(ctx, &cloudformation.CreateStackInput{StackName: aws.String(StackName), TemplateBody: aws.String(template(tm, machine, events))}); err != nil {
		t.Fatalf("create the fixture stack: %v", err)
	}
	lc := lambda.NewFromConfig(cfg)
	fns, err := cfn.ListStackResources(ctx, &cloudformation.ListStackResourcesInput{StackName: aws.String(StackName)})
	if err != nil {
		t.Fatal(err)
	}
	phys := map[string]string{}
	for _, r := range fns.StackResourceSummaries {
		phys[aws.ToString(r.LogicalResourceId)] = aws.ToString(r.PhysicalResourceId)
	}
	sq := sqs.NewFromConfig(cfg)
	arnOf := func(id string) string {
		a, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(phys[id]), AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
		if err != nil {
			t.Fatal(err)
		}
		return a.Attributes["QueueArn"]
	}
	// The template's on-failure destinations, which moto's CloudFormation
	// does not create.
	if _, err := lc.PutFunctionEventInvokeConfig(ctx, &lambda.PutFunctionEventInvokeConfigInput{FunctionName: aws.String(phys["TasksFireFunctionEC3DFAB6"]),
		DestinationConfig: &lambdatypes.DestinationConfig{OnFailure: &lambdatypes.OnFailure{Destination: aws.String(arnOf("TasksExpiryFailureQueueEAF54407"))}}}); err != nil {
		t.Fatal(err)
	}
	// The stream mapping's source: the table as moto made it (the items
	// live in dynalite, under the same name).
	stream := ""
	if d, err := dynamodb.NewFromConfig(cfg).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(TaskTable)}); err == nil {
		stream = aws.ToString(d.Table.LatestStreamArn)
	}
	if stream != "" {
		if _, err := lc.CreateEventSourceMapping(ctx, &lambda.CreateEventSourceMappingInput{FunctionName: aws.String(phys["CancellationProcessorC2A9BB34"]),
			EventSourceArn: aws.String(stream), StartingPosition: lambdatypes.EventSourcePositionTrimHorizon,
			DestinationConfig: &lambdatypes.DestinationConfig{OnFailure: &lambdatypes.OnFailure{Destination: aws.String(arnOf("CancellationStreamFailureQueueF79B49F2"))}}}); err != nil {
			t.Fatal(err)
		}
	}
	sc := scheduler.NewFromConfig(cfg)
	for _, g := range []string{Group, CampaignGroup} {
		if _, err := sc.CreateScheduleGroup(ctx, &scheduler.CreateScheduleGroupInput{Name: aws.String(g)}); err != nil {
			t.Fatal(err)
		}
	}
	inv := &Invokes{Lambda: lc}
	st, err := ops.Discover(ctx, cfn, inv, sq, StackName)
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	w := &ops.World{Stack: st, AWS: cfg, DDB: ddb, Lambda: inv, SQS: sq, Now: func() time.Time { return now }}
	if inv.fires, err = firings(st, ddb, w.Now); err != nil {
		t.Fatalf("the firing functions: %v", err)
	}
	return &Fixture{World: w, Tasks: tasktable.New(ddb, TaskTable), Sched: sc, SQS: sq, Invoked: inv}
}

// Table is the fixture's discovered table called name.
func (f *Fixture) Table(t testing.TB, name string) ops.Table {
	t.Helper()
	tb, err := f.World.Stack.Table(name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// Arm writes an item of the table called name, armed (its schema's
// first armed state) and due at due, and, when withEntry, its entry on
// the table's timer (as the cancellation worker makes it); it returns
// the key as the command reads it ("pk=...,sk=...").
func (f *Fixture) Arm(t testing.TB, name string, k contract.Key, due time.Time, withEntry bool) string {
	t.Helper()
	ctx := context.Background()
	tb := f.Table(t, name)
	s := tb.Schema
	attrs := s.Attrs(k)
	attrs[s.DueAttr], attrs[s.StateAttr] = contract.FormatTime(due), s.ArmedStates[0]
	if _, err := f.World.DDB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tb.Name), Item: dynamo.ToAttrs(attrs)}); err != nil {
		t.Fatal(err)
	}
	if withEntry {
		tm, err := f.World.Timer(tb)
		if err != nil {
			t.Fatal(err)
		}
		it, err := s.ItemFrom(attrs)
		if err != nil {
			t.Fatal(err)
		}
		if err := tm.Arm(ctx, s.ScheduleFor(it)); err != nil {
			t.Fatal(err)
		}
	}
	if s.NoSortKey {
		return "pk=" + k.Partition
	}
	return "pk=" + k.Partition + ",sk=" + k.Sort
}

// Queue is the fixture's queue of that kind, of the task table (not the
// campaigns').
func (f *Fixture) Queue(t testing.TB, kind ops.QueueKind) ops.Queue {
	t.Helper()
	for _, q := range f.World.Stack.Queues {
		if q.Kind == kind && !strings.Contains(q.Name, "Campaign") {
			return q
		}
	}
	t.Fatalf("no %s queue in %+v", kind, f.World.Stack.Queues)
	return ops.Queue{}
}

// Count is how many messages q holds (visible or not).
func (f *Fixture) Count(t testing.TB, q ops.Queue) int {
	t.Helper()
	a, err := f.SQS.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q.URL),
		AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range []string{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"} {
		var v int
		_ = json.Unmarshal([]byte(strings.TrimSpace(a.Attributes[k])), &v)
		n += v
	}
	return n
}

// Campaign writes campaign c and its tasks, and arms each task's schedule
// on the campaigns' timer (as provisioning would), which it returns.
func (f *Fixture) Campaign(t testing.TB, c campaign.Campaign, tasks []campaign.SendTask) timers.Timer {
	t.Helper()
	ctx := context.Background()
	store, err := campaigntable.NewCampaignStore(f.World.DDB, CampaignTable)
	if err != nil {
		t.Fatal(err)
	}
	var env map[string]string
	for _, fn := range f.World.Stack.Functions {
		if fn.Env[campaignenv.CampaignTable] != "" && fn.Env[envvars.ScheduleGroup] != "" {
			env = fn.Env
		}
	}
	get := func(k string) string { return env[k] }
	tc, err := campaigntimer.Load(lambdaenv.New(get), get)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := timers.New(f.World.AWS, tc)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Create(ctx, c, tasks); err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks {
		if err := tm.Arm(ctx, tk.Schedule()); err != nil {
			t.Fatal(err)
		}
	}
	return tm
}
