// Package ops is the operator's view of a deployed stack (cmd/unschedule):
// it discovers the stack's tables, timers, queues and functions from its
// name, and answers why an item is where it is, what the reconciler would
// repair, and what the failure queues hold, on the same adapters and the
// same core code as the functions (reconcile.Plan, cancel's messages,
// the contract's claim fields). It holds no rule of its own.
package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/timers"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
)

// CloudFormation is the part of the CloudFormation client discovery uses:
// ListStackResources, paged, since DescribeStackResources returns only a
// stack's first 100 resources (the to-do stack has some 160)
// (https://docs.aws.amazon.com/AWSCloudFormation/latest/APIReference/API_DescribeStackResources.html).
type CloudFormation interface {
	ListStackResources(ctx context.Context, in *cloudformation.ListStackResourcesInput, opts ...func(*cloudformation.Options)) (*cloudformation.ListStackResourcesOutput, error)
}

// resource is one resource of a stack.
type resource struct{ id, phys, kind string }

// resources lists every resource of the stack, and of its nested stacks.
func resources(ctx context.Context, cfn CloudFormation, stack string, depth int) ([]resource, error) {
	var out []resource
	in := &cloudformation.ListStackResourcesInput{StackName: aws.String(stack)}
	for {
		page, err := cfn.ListStackResources(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list the resources of stack %s: %w", stack, err)
		}
		for _, r := range page.StackResourceSummaries {
			res := resource{id: aws.ToString(r.LogicalResourceId), phys: aws.ToString(r.PhysicalResourceId), kind: aws.ToString(r.ResourceType)}
			if res.kind == "AWS::CloudFormation::Stack" && res.phys != "" && depth < 3 {
				nested, err := resources(ctx, cfn, res.phys, depth+1)
				if err != nil {
					return nil, err
				}
				out = append(out, nested...)
				continue
			}
			out = append(out, res)
		}
		if aws.ToString(page.NextToken) == "" {
			return out, nil
		}
		in.NextToken = page.NextToken
	}
}

// Lambda is the part of the Lambda client ops uses: each function's
// configuration, its event source mappings and on-failure destination,
// and the asynchronous invoke of a redrive.
type Lambda interface {
	GetFunctionConfiguration(ctx context.Context, in *lambda.GetFunctionConfigurationInput, opts ...func(*lambda.Options)) (*lambda.GetFunctionConfigurationOutput, error)
	ListEventSourceMappings(ctx context.Context, in *lambda.ListEventSourceMappingsInput, opts ...func(*lambda.Options)) (*lambda.ListEventSourceMappingsOutput, error)
	GetFunctionEventInvokeConfig(ctx context.Context, in *lambda.GetFunctionEventInvokeConfigInput, opts ...func(*lambda.Options)) (*lambda.GetFunctionEventInvokeConfigOutput, error)
	Invoke(ctx context.Context, in *lambda.InvokeInput, opts ...func(*lambda.Options)) (*lambda.InvokeOutput, error)
}

// SQS is the part of the SQS client ops uses.
type SQS interface {
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, opts ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, opts ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Function is one function of the stack and its environment.
type Function struct {
	LogicalID string `json:"logicalId"`
	Name      string `json:"name"`
	ARN       string `json:"arn"`
	// LogGroup is where it logs (its logging configuration's, else
	// /aws/lambda/<name>).
	LogGroup string            `json:"logGroup"`
	Env      map[string]string `json:"-"`
}

// Table is an item table the stack's functions read, with its schema
// and its timer (from the functions that carry them).
type Table struct {
	Name string `json:"name"`
	// LogicalID is the table's logical id in its stack ("" when the
	// stack does not hold it: a table the functions name from elsewhere).
	LogicalID string          `json:"logicalId,omitempty"`
	Schema    contract.Schema `json:"schema"`
	// Timer is the table's timer, read from the function that carries
	// both (the reconciler, the cancel worker) as the functions read it.
	Timer    timers.Config `json:"-"`
	HasTimer bool          `json:"hasTimer"`
	// TimerName is what Timer is called, for people: "scheduler:<group>",
	// "stepfunctions:<state machine>", "ttl:<attribute>".
	TimerName string `json:"timer"`
	// Reconciler is the function that repairs the table (its environment
	// wires a pass); "" when the stack has none.
	Reconciler string `json:"reconciler,omitempty"`
	// Functions are the functions that carry the table's schema.
	Functions []string `json:"functions"`
	// Targets are the stack's functions its firing invokes
	// (TARGET_FUNCTION_ARN) that carry no schema, such as the future
	// events' and the deferred jobs' dispatchers: their lines name the
	// table's items too.
	Targets []string `json:"targets,omitempty"`
	// Kind is what the table holds: "" an item table the core's
	// reconciler serves (TABLE_NAME), KindCampaignSends the campaign
	// table's send tasks, which the campaign reconciler repairs with the
	// campaign's rules.
	Kind string `json:"kind,omitempty"`
}

// QueueKind is what a queue holds.
type QueueKind string

// The queues ops knows.
const (
	// QueueWork is a queue a function consumes (the cancellation FIFO).
	QueueWork QueueKind = "work"
	// QueueDeadLetters holds what a work queue's consumer gave up on
	// (its redrive policy's target): redriven to the work queue.
	QueueDeadLetters QueueKind = "dead-letters"
	// QueueStreamFailures holds a stream mapping's batches that ran out
	// of retries (the on-failure destination): shard and sequence numbers.
	QueueStreamFailures QueueKind = "stream-failures"
	// QueueSchedulerDeadLetters holds the timer's firings that the
	// scheduler could not deliver: redriven to the function they invoke.
	QueueSchedulerDeadLetters QueueKind = "scheduler-dead-letters"
	// QueueAsyncFailures holds asynchronous invocations that ran out of
	// retries (the function's on-failure destination): redriven to it.
	QueueAsyncFailures QueueKind = "async-failures"
)

// Queue is one queue of the stack, and what it is to its functions.
type Queue struct {
	Name      string    `json:"name"`
	URL       string    `json:"url"`
	ARN       string    `json:"arn"`
	Kind      QueueKind `json:"kind"`
	LogicalID string    `json:"logicalId"`
	// Function is the function whose failures it holds (or that consumes
	// it); Target is where a redrive re-sends: the work queue's URL, or
	// the function's ARN.
	Function string `json:"function,omitempty"`
	Target   string `json:"target,omitempty"`
	// Table is the item table whose stream a stream-failures queue's
	// mapping reads (from the mapping's stream ARN); "" otherwise.
	Table string `json:"table,omitempty"`
	// Schema decodes its messages' item keys ("" when unknown).
	Schema *contract.Schema `json:"-"`
	Fifo   bool             `json:"fifo"`
}

// Stack is what discovery found.
type Stack struct {
	Name      string     `json:"stack"`
	Tables    []Table    `json:"tables"`
	Queues    []Queue    `json:"queues"`
	Functions []Function `json:"functions"`
}

// FailureQueues are the queues that hold failures, in a fixed order.
func (s Stack) FailureQueues() []Queue {
	var out []Queue
	for _, q := range s.Queues {
		if q.Kind != QueueWork {
			out = append(out, q)
		}
	}
	return out
}

// Table returns the table called name: its physical name, its logical
// id, or its logical id without CDK's hash suffix ("TasksTable" for
// "TasksTable45D1B62D"), in any case; the only one when name is "".
func (s Stack) Table(name string) (Table, error) {
	for _, t := range s.Tables {
		if t.Name == name || (name == "" && len(s.Tables) == 1) || (name != "" && logicalMatch(t.LogicalID, name)) {
			return t, nil
		}
	}
	var names []string
	for _, t := range s.Tables {
		n := t.Name
		if t.LogicalID != "" {
			n += " (" + t.LogicalID + ")"
		}
		names = append(names, n)
	}
	if name == "" {
		return Table{}, fmt.Errorf("the stack has %d item tables (%s): name one with --table", len(s.Tables), strings.Join(names, ", "))
	}
	return Table{}, fmt.Errorf("no item table %q in the stack (it has %s)", name, strings.Join(names, ", "))
}

// logicalMatch says whether name is the logical id id, or id without the
// eight hexadecimal digits CDK appends, case aside.
func logicalMatch(id, name string) bool {
	if id == "" {
		return false
	}
	if strings.EqualFold(id, name) {
		return true
	}
	if n := len(id) - 8; n > 0 && strings.Trim(id[n:], "0123456789ABCDEF") == "" {
		return strings.EqualFold(id[:n], name)
	}
	return false
}

// Function returns the function called name (or with that ARN).
func (s Stack) Function(name string) (Function, bool) {
	for _, f := range s.Functions {
		if f.Name == name || f.ARN == name {
			return f, true
		}
	}
	return Function{}, false
}

// Discover reads the stack's resources (its nested stacks' too) and its
// functions' configuration.
// No ARN is typed by hand: the tables, schemas and timers come from the
// functions' environment (the constructs set it), the queues' roles from
// the event source mappings, the on-failure destinations and the queues'
// redrive policies.
func Discover(ctx context.Context, cfn CloudFormation, fn Lambda, q SQS, stack string) (Stack, error) {
	all, err := resources(ctx, cfn, stack, 0)
	if err != nil {
		return Stack{}, err
	}
	st := Stack{Name: stack}
	queues := map[string]*Queue{} // by ARN
	var queueOrder []string
	tableIDs := map[string]string{} // physical name to logical id
	for _, r := range all {
		id, phys := r.id, r.phys
		switch r.kind {
		case "AWS::DynamoDB::Table", "AWS::DynamoDB::GlobalTable":
			tableIDs[phys] = id
		case "AWS::Lambda::Function":
			c, err := fn.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(phys)})
			if err != nil {
				return Stack{}, fmt.Errorf("read function %s: %w", phys, err)
			}
			f := Function{LogicalID: id, Name: aws.ToString(c.FunctionName), ARN: aws.ToString(c.FunctionArn)}
			if c.Environment != nil {
				f.Env = c.Environment.Variables
			}
			f.LogGroup = "/aws/lambda/" + f.Name
			if c.LoggingConfig != nil && aws.ToString(c.LoggingConfig.LogGroup) != "" {
				f.LogGroup = aws.ToString(c.LoggingConfig.LogGroup)
			}
			st.Functions = append(st.Functions, f)
		case "AWS::SQS::Queue":
			a, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(phys),
				AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn, sqstypes.QueueAttributeNameRedrivePolicy, sqstypes.QueueAttributeNameFifoQueue}})
			if err != nil {
				return Stack{}, fmt.Errorf("read queue %s: %w", phys, err)
			}
			arn := a.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
			qu := &Queue{Name: arn[strings.LastIndex(arn, ":")+1:], URL: phys, ARN: arn, LogicalID: id,
				Fifo: a.Attributes[string(sqstypes.QueueAttributeNameFifoQueue)] == "true"}
			queues[arn] = qu
			queueOrder = append(queueOrder, arn)
		}
	}
	sort.Slice(st.Functions, func(i, j int) bool { return st.Functions[i].LogicalID < st.Functions[j].LogicalID })
	if err := classify(ctx, fn, &st, queues); err != nil {
		return Stack{}, err
	}
	st.Tables = append(tables(st.Functions), campaignTables(st.Functions)...)
	for i := range st.Tables {
		st.Tables[i].LogicalID = tableIDs[st.Tables[i].Name]
	}
	// The dead-letter queues take their work queue's consumer and schema.
	for _, arn := range queueOrder {
		qu := queues[arn]
		if qu.Kind == "" {
			qu.Kind = QueueWork
		}
	}
	resolveDeadLetters(ctx, q, queues)
	for _, arn := range queueOrder {
		st.Queues = append(st.Queues, *queues[arn])
	}
	sort.Slice(st.Queues, func(i, j int) bool { return st.Queues[i].LogicalID < st.Queues[j].LogicalID })
	return st, nil
}

// resolveDeadLetters marks each work queue's redrive target as its
// dead-letter queue, with the work queue's consumer and schema.
func resolveDeadLetters(ctx context.Context, q SQS, queues map[string]*Queue) {
	for _, work := range queues {
		a, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(work.URL),
			AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameRedrivePolicy}})
		if err != nil {
			continue
		}
		var p struct {
			Target string `json:"deadLetterTargetArn"`
		}
		if json.Unmarshal([]byte(a.Attributes[string(sqstypes.QueueAttributeNameRedrivePolicy)]), &p) != nil {
			continue
		}
		if dlq, ok := queues[p.Target]; ok {
			dlq.Kind, dlq.Target, dlq.Function, dlq.Schema = QueueDeadLetters, work.URL, work.Function, work.Schema
		}
	}
}

// classify gives each queue its kind from the functions: what their
// event source mappings consume and where they send failures, where
// their asynchronous invocations go on failure, and the schedules' dead
// letter queue their environment names.
func classify(ctx context.Context, fn Lambda, st *Stack, queues map[string]*Queue) error {
	for _, f := range st.Functions {
		schema := schemaOf(f)
		ms, err := fn.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: aws.String(f.Name)})
		if err != nil {
			return fmt.Errorf("list the event sources of %s: %w", f.Name, err)
		}
		for _, m := range ms.EventSourceMappings {
			if q, ok := queues[aws.ToString(m.EventSourceArn)]; ok {
				q.Kind, q.Function, q.Schema = QueueWork, f.Name, schema
			}
			if dest := onFailure(m.DestinationConfig); dest != "" {
				if q, ok := queues[dest]; ok {
					q.Kind, q.Function, q.Schema = QueueStreamFailures, f.Name, schema
					q.Table = streamTable(aws.ToString(m.EventSourceArn))
				}
			}
		}
		ic, err := fn.GetFunctionEventInvokeConfig(ctx, &lambda.GetFunctionEventInvokeConfigInput{FunctionName: aws.String(f.Name)})
		var nf *lambdatypes.ResourceNotFoundException
		switch {
		case errors.As(err, &nf):
		case err != nil:
			return fmt.Errorf("read the asynchronous invoke configuration of %s: %w", f.Name, err)
		default:
			if dest := onFailure(ic.DestinationConfig); dest != "" {
				if q, ok := queues[dest]; ok {
					q.Kind, q.Function, q.Target, q.Schema = QueueAsyncFailures, f.Name, f.ARN, schema
				}
			}
		}
		if dlq := f.Env[envvars.SchedulerDLQArn]; dlq != "" {
			if q, ok := queues[dlq]; ok {
				q.Kind, q.Schema = QueueSchedulerDeadLetters, schema
				q.Target = f.Env[envvars.ScheduleTargetArn]
				if t, ok := st.Function(q.Target); ok {
					q.Function = t.Name
				}
			}
		}
	}
	return nil
}

// streamTable is the table of a DynamoDB stream's ARN,
// arn:aws:dynamodb:<region>:<account>:table/<name>/stream/<label>
// (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazondynamodb.html#amazondynamodb-resources-for-iam-policies);
// "" for any other source.
func streamTable(arn string) string {
	_, rest, ok := strings.Cut(arn, ":table/")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, "/stream/")
	if !ok {
		return ""
	}
	return name
}

func onFailure(d *lambdatypes.DestinationConfig) string {
	if d == nil || d.OnFailure == nil {
		return ""
	}
	return aws.ToString(d.OnFailure.Destination)
}

// schemaOf is the function's item schema, nil when it carries none.
func schemaOf(f Function) *contract.Schema {
	v := f.Env[envvars.ItemSchema]
	if v == "" {
		return nil
	}
	s, err := contract.Parse(v)
	if err != nil {
		return nil
	}
	return &s
}

// tables groups the functions by the table they name (TABLE_NAME) and
// finds each one's timer: on a function that names the table and its
// timer, else on one that carries the same schema and a timer (the
// cancel worker carries no table name).
func tables(fns []Function) []Table {
	byName := map[string]*Table{}
	var order []string
	for _, f := range fns {
		name, s := f.Env[envvars.Table], schemaOf(f)
		if name == "" || s == nil {
			continue
		}
		t, ok := byName[name]
		if !ok {
			t = &Table{Name: name, Schema: *s}
			byName[name] = t
			order = append(order, name)
		}
		t.Functions = append(t.Functions, f.Name)
		// The reconciler: a target function, or the firing function that
		// runs the target inside it (FireEntry), with a timer and a budget.
		fires := f.Env[envvars.TargetFunctionArn] != "" || f.Env[envvars.FireFunctionArn] != ""
		if fires && hasTimer(f.Env) && f.Env[envvars.BudgetSec] != "" {
			t.Reconciler = f.Name
		}
	}
	for _, name := range order {
		t := byName[name]
		for _, pass := range []bool{true, false} {
			for _, f := range fns {
				if t.HasTimer || !hasTimer(f.Env) || f.Env[envvars.ItemSchema] != t.Schema.EnvValue() {
					continue
				}
				if pass && f.Env[envvars.Table] != name {
					continue
				}
				if c, err := loadTimer(f.Env); err == nil {
					t.Timer, t.HasTimer, t.TimerName = c, true, timerName(c)
				}
			}
		}
	}
	out := make([]Table, 0, len(order))
	for _, name := range order {
		t := byName[name]
		t.Targets = targets(fns, t.Functions)
		out = append(out, *t)
	}
	return out
}

// targets are the functions of fns, not among names, that a function
// among names invokes as its target (by ARN, qualified or not).
func targets(fns []Function, names []string) []string {
	var out []string
	for _, f := range fns {
		arn := f.Env[envvars.TargetFunctionArn]
		if arn == "" || !slices.Contains(names, f.Name) {
			continue
		}
		for _, g := range fns {
			if g.ARN != "" && (arn == g.ARN || strings.HasPrefix(arn, g.ARN+":")) &&
				!slices.Contains(names, g.Name) && !slices.Contains(out, g.Name) {
				out = append(out, g.Name)
			}
		}
	}
	return out
}

func hasTimer(env map[string]string) bool {
	return env[envvars.ScheduleGroup] != "" || env[envvars.StateMachineArn] != "" || env[envvars.TTLAttribute] != ""
}

func loadTimer(env map[string]string) (timers.Config, error) {
	get := func(k string) string { return env[k] }
	e := lambdaenv.New(get)
	c, err := timers.Load(e, get)
	if err != nil {
		return c, err
	}
	return c, e.Err()
}

func timerName(c timers.Config) string {
	return c.Label
}
