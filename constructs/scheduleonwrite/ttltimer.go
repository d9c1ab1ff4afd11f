package scheduleonwrite

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/gofn"
	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/nag"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// EnvMaxLateness is MaxLateness in seconds, in the TTL watch's
// environment (lambdas/ttlwatch).
const EnvMaxLateness = envvars.MaxLatenessSeconds

// Defaults of TTLTimerProps TTLBatchSize, TTLParallelizationFactor and
// TTLOverdueCheckEvery (the TTL watch scans every 6 hours).
const (
	DefaultTTLBatchSize              = 10
	DefaultTTLParallelizationFactor  = 1
	DefaultTTLOverdueCheckEveryHours = 6
)

// Fixed settings of the TTL timer: no prop changes them.
const (
	// DefaultTTLRetryAttempts is how often the TTL stream mapping retries
	// a failed batch before it goes to TTLFailureQueue.
	DefaultTTLRetryAttempts = 10
	// TTLWatchTimeoutMin bounds one scan of the TTL watch.
	TTLWatchTimeoutMin = 15
)

// TTLTimerProps configures the TTL timer.
type TTLTimerProps struct {
	// MaxLateness is how late an item may fire: at least 48 hours
	// (DynamoDB deletes expired items typically within two days). It is
	// also how long past its expiry a marker may stay before
	// TTLOverdueAlarm fires. Required.
	MaxLateness awscdk.Duration
	// TTLAttribute is the table's TTL attribute that markers carry. A new
	// table gets it as its TimeToLiveAttribute. For an ExistingTable, TTL
	// must be enabled on it: a Table or TableV2 of this app names it once,
	// in its own props (TimeToLiveAttribute), and the timer reads it from
	// there (leave this unset; synth fails when the two differ or the
	// table has no TTL); for an imported table synth cannot see its TTL,
	// so the prop is required.
	// Default: a new table: "unscheduleTtl"; an ExistingTable of this app:
	// its TimeToLiveAttribute; an imported ExistingTable: required.
	TTLAttribute string
	// TTLOverdueCheckEvery is how often the TTL watch scans the table for
	// markers still there more than MaxLateness after their expiry, and
	// publishes their count (alarmed by TTLOverdueAlarm), 1 hour..1 day.
	// Each check is a Scan: it reads the whole table.
	// Default: 6 hours.
	TTLOverdueCheckEvery awscdk.Duration
	// TTLBatchSize is how many stream records the firing function gets
	// at once, 1..10000.
	// Default: 10.
	TTLBatchSize *float64
	// TTLParallelizationFactor is how many batches of one shard run at
	// once, 1..10.
	// Default: 1.
	TTLParallelizationFactor *float64
	// TTLMaxConcurrency bounds the concurrent firing invocations,
	// 1..1000, as the firing function's reserved concurrency (a stream
	// mapping has no MaximumConcurrency; that is SQS only:
	// https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-properties-lambda-eventsourcemapping-scalingconfig.html).
	// The mapping is then the function's only caller.
	// Default: no bound beyond shards x TTLParallelizationFactor.
	TTLMaxConcurrency *float64
}

// TTLTimer fires each item with one marker item whose TTL attribute is
// the due time; the table's stream, filtered to TTL deletions, invokes
// the firing function. Free, but late: DynamoDB deletes expired items
// typically within two days, so MaxLateness must allow 48 hours. Its
// fields are set when NewScheduleOnWrite binds it.
type TTLTimer struct {
	binding
	props TTLTimerProps
	// TTLMapping maps the table's stream, filtered to TTL deletions of
	// markers, to the firing function. TTLFailureQueue gets the records it
	// gave up on (alarmed by TTLFailureAlarm); TTLDispatchFailedAlarm
	// watches the firings that failed.
	TTLMapping                              awslambda.EventSourceMapping
	TTLFailureQueue                         awssqs.IQueue
	TTLFailureAlarm, TTLDispatchFailedAlarm awscloudwatch.Alarm
	// TTLWatch scans the table every TTLOverdueCheckEvery; TTLOverdueAlarm
	// fires while a marker is still there more than MaxLateness after its
	// own expiry (TTL off, or deletions far behind), TTLWatchErrorsAlarm
	// when the scan fails.
	TTLWatch                             *gofn.Function
	TTLOverdueAlarm, TTLWatchErrorsAlarm awscloudwatch.Alarm
}

// NewTTLTimer is the TTL timer. props.MaxLateness is required (synth
// fails without it). Pass it as ScheduleOnWriteProps.Timer.
func NewTTLTimer(props *TTLTimerProps) *TTLTimer {
	t := &TTLTimer{binding: binding{kind: "TTLTimer"}}
	if props != nil {
		t.props = *props
	}
	p := &t.props
	p.TTLOverdueCheckEvery = propcheck.DurationOr(p.TTLOverdueCheckEvery, awscdk.Duration_Hours(jsii.Number(DefaultTTLOverdueCheckEveryHours)))
	p.TTLBatchSize = jsii.Number(propcheck.Number(p.TTLBatchSize, DefaultTTLBatchSize))
	p.TTLParallelizationFactor = jsii.Number(propcheck.Number(p.TTLParallelizationFactor, DefaultTTLParallelizationFactor))
	return t
}

// Plan implements Timer: it checks the props and the ExistingTable's TTL,
// and asks for TTL and a stream of old images on a new table and, with
// TTLMaxConcurrency, the firing function's reserved concurrency.
func (t *TTLTimer) Plan(plan TimerPlan) TimerNeeds {
	t.plan(plan.ID)
	id, p := plan.ID, &t.props
	// An ExistingTable of this app says its TTL attribute: the timer takes
	// it, so the attribute is named once, on the table. An imported
	// table's TTL cannot be read: its TTLAttribute is required.
	if p.TTLAttribute == "" && plan.ExistingTable != nil {
		if info := resource.InspectTable(plan.ExistingTable); info.Known {
			p.TTLAttribute = info.TTLAttribute
			if p.TTLAttribute == "" {
				p.TTLAttribute = timerspec.DefaultTTLAttr // checkTableTTL says to enable it
			}
		}
	}
	if p.TTLAttribute == "" && plan.ExistingTable == nil {
		p.TTLAttribute = timerspec.DefaultTTLAttr
	}
	if p.MaxLateness == nil {
		panic(fmt.Sprintf("%s: the TTL timer fires items late (DynamoDB deletes expired items typically within two days): "+
			"set MaxLateness (TTLTimerProps) to what your items tolerate, at least %s, or use NewStepFunctionsTimer or NewSchedulerTimer", id, timerspec.TTLPrecision))
	}
	if !*awscdk.Token_IsUnresolved(p.MaxLateness.ToSeconds(nil)) {
		if err := timerspec.CheckLateness(time.Duration(*p.MaxLateness.ToSeconds(nil)) * time.Second); err != nil {
			panic(fmt.Sprintf("%s: %v", id, err))
		}
	}
	propcheck.CheckSeconds(id, "TTLOverdueCheckEvery", p.TTLOverdueCheckEvery, 3600, 86400,
		"whole hours or minutes from 1 hour to 1 day; each check scans the table")
	if plan.ExistingTable != nil {
		checkTableTTL(id, plan.ExistingTable, p.TTLAttribute)
	}
	propcheck.CheckWhole(id, "TTLBatchSize", *p.TTLBatchSize, 1, 10000, "records per invocation; Lambda allows 1 to 10000 for a DynamoDB stream")
	propcheck.CheckWhole(id, "TTLParallelizationFactor", *p.TTLParallelizationFactor, 1, 10, "concurrent batches per shard; Lambda allows 1 to 10")
	if p.TTLMaxConcurrency != nil {
		propcheck.CheckWhole(id, "TTLMaxConcurrency", *p.TTLMaxConcurrency, 1, 1000, "the firing function's reserved concurrency")
	}
	// The stream filter reads the payload from a deleted marker's old image.
	return TimerNeeds{TableTTLAttribute: p.TTLAttribute, TableStream: awsdynamodb.StreamViewType_OLD_IMAGE,
		FireReservedConcurrency: p.TTLMaxConcurrency}
}

// checkTableTTL panics unless TTL is enabled on attr of table: otherwise
// markers never expire and no item fires. For a Table or TableV2 of this
// app synth reads its TTL; for an imported table it cannot, so
// TTLAttribute is required (and must have TTL enabled).
func checkTableTTL(id string, table awsdynamodb.ITable, attr string) {
	enable := fmt.Sprintf("aws dynamodb update-time-to-live --table-name <table> --time-to-live-specification Enabled=true,AttributeName=%s", attr)
	if attr == "" {
		panic(fmt.Sprintf("%s: ExistingTable %s is imported, so synth cannot see its TTL: set TTLAttribute to the attribute TTL is enabled on "+
			"(the TTL timer's markers expire through it; enable it with aws dynamodb update-time-to-live, e.g. AttributeName=%s)",
			id, *table.Node().Path(), timerspec.DefaultTTLAttr))
	}
	info := resource.InspectTable(table)
	if !info.Known || info.TTLAttribute == attr {
		return
	}
	if info.TTLAttribute == "" {
		panic(fmt.Sprintf("%s: ExistingTable %s has no TTL, so the markers of the TTL timer would never expire and no item would fire: "+
			"enable TTL on attribute %q (awsdynamodb.TableProps.TimeToLiveAttribute = %q, or %s)",
			id, *table.Node().Path(), attr, attr, enable))
	}
	panic(fmt.Sprintf("%s: ExistingTable %s has TTL on attribute %q, not on TTLAttribute %q, so the markers would never expire: "+
		"set TTLAttribute to %q (a table has one TTL attribute)", id, *table.Node().Path(), info.TTLAttribute, attr, info.TTLAttribute))
}

// Bind implements Timer: it maps the table's stream, filtered to TTL
// deletions of markers, to the firing function, and adds the TTL watch.
func (t *TTLTimer) Bind(c constructs.Construct, core TimerCore) TimerBinding {
	t.bind(c, core)
	p := t.props
	var q awssqs.Queue
	t.TTLFailureQueue, q = resource.Queue(c, core.ID, "TTLFailureQueue", nil, "", nil, "", resource.DeadLetterQueueProps(core.RemovalPolicy))
	nag.Suppress(q, nag.Rule{ID: "AwsSolutions-SQS3", Reason: "This queue is the TTL mapping's on-failure destination; a DLQ of a DLQ adds nothing"})
	var pattern map[string]any
	if err := json.Unmarshal([]byte(timerspec.TTLFilterPattern()), &pattern); err != nil {
		panic(err)
	}
	expiry := core.Fire.Function
	t.TTLMapping = awslambda.NewEventSourceMapping(c, jsii.String("TTLMapping"), &awslambda.EventSourceMappingProps{
		Target:                  expiry,
		EventSourceArn:          core.Table.TableStreamArn(),
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               p.TTLBatchSize,
		ParallelizationFactor:   p.TTLParallelizationFactor,
		ReportBatchItemFailures: jsii.Bool(true),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           jsii.Number(DefaultTTLRetryAttempts),
		MaxRecordAge:            awscdk.Duration_Days(jsii.Number(1)),
		OnFailure:               awslambdaeventsources.NewSqsDlq(t.TTLFailureQueue),
		Filters:                 &[]*map[string]any{awslambda.FilterCriteria_Filter(&pattern)},
	})
	core.Table.GrantStreamRead(expiry)
	nag.Suppress(nag.RolePolicy(expiry), nag.Rule{ID: "AwsSolutions-IAM5", AppliesTo: []any{"Resource::*"},
		Reason: "dynamodb:ListStreams has no resource-level permissions (the TTL timer's stream mapping needs it); stream reads are on the table's stream only."})
	t.TTLFailureQueue.GrantSendMessages(expiry)
	t.TTLFailureAlarm = alarms.QueueNotEmpty(c, "TTLFailureAlarm", t.TTLFailureQueue,
		"TTL deletions of markers could not be fired after every retry: those items did not fire. Each message names the stream records; "+
			"invoke the firing function with each marker's payload.", core.AlarmTopic)
	t.buildWatch(c, core)
	t.TTLDispatchFailedAlarm = alarms.AtLeast(c, "TTLDispatchFailedAlarm",
		"The firing function failed to fire TTL deletions (the table, or the target); the stream retries them. Check its logs.",
		alarms.CustomMetric(c, metrics.FunctionExpiry, metrics.TTLDispatchFailed, "Sum", nil), 1, core.AlarmTopic)
	return t
}

// buildWatch adds the periodic look for overdue markers: a function that
// scans the table every TTLOverdueCheckEvery and publishes how many
// markers expired more than MaxLateness ago and still exist, and an alarm
// on that count. A marker DynamoDB never deletes (TTL not enabled on the
// attribute) makes no stream record, so nothing else can see it.
func (t *TTLTimer) buildWatch(c constructs.Construct, core TimerCore) {
	p := t.props
	every := p.TTLOverdueCheckEvery
	t.TTLWatch = gofn.NewFunction(c, jsii.String("TTLWatch"), &gofn.FunctionProps{
		Entry:       "lambdas/ttlwatch",
		Description: "Counts TTL markers still in the table more than MaxLateness after their expiry",
		Timeout:     awscdk.Duration_Minutes(jsii.Number(TTLWatchTimeoutMin)),
		Logs:        core.Logs,
		Environment: map[string]string{envvars.Table: *core.Table.TableName(), envvars.TTLAttribute: p.TTLAttribute,
			envvars.ItemSchema: core.Schema.EnvValue(), EnvMaxLateness: fmt.Sprint(*p.MaxLateness.ToSeconds(nil))},
	})
	grantMarkerListing(core, t.TTLWatch.Function)
	awsevents.NewRule(c, jsii.String("TTLWatchSchedule"), &awsevents.RuleProps{
		Description: jsii.String("Runs the TTL watch: overdue markers"),
		Schedule:    awsevents.Schedule_Rate(every),
		Targets:     &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(t.TTLWatch.Function, nil)},
	})
	// Maximum over one interval: the gauge of the last run, so the alarm
	// stays in ALARM while markers stay overdue.
	overdue := alarms.CustomMetric(c, metrics.FunctionTTLWatch, metrics.TTLOverdueMarkers, "Maximum", every)
	t.TTLOverdueAlarm = alarms.AtLeast(c, "TTLOverdueAlarm",
		fmt.Sprintf("Markers of the TTL timer are still in the table more than MaxLateness (%s) after their expiry: their items have not fired. "+
			"Check that TTL is enabled on attribute %q of the table (aws dynamodb describe-time-to-live); the TTL watch's logs name the markers.",
			*p.MaxLateness.ToHumanString(), p.TTLAttribute),
		overdue, 1, core.AlarmTopic)
	t.TTLWatchErrorsAlarm = alarms.AtLeast(c, "TTLWatchErrorsAlarm",
		"The TTL watch failed (its scan of the table): overdue markers are not being looked for. Check its logs.",
		t.TTLWatch.Function.MetricErrors(alarms.SumOptions(&awscloudwatch.MetricOptions{Period: every})), 1, core.AlarmTopic)
}

// Environment implements TimerBinding: the timer
// (UNSCHEDULE_TIMER=TTL), the table and its TTL attribute.
func (t *TTLTimer) Environment() map[string]string {
	core := t.bound("Environment")
	return map[string]string{envvars.TimerKind: string(timerspec.TTL), envvars.Table: *core.Table.TableName(), envvars.TTLAttribute: t.props.TTLAttribute}
}

// GrantModify implements TimerBinding: put and delete items of the table
// (the markers).
func (t *TTLTimer) GrantModify(grantee awsiam.IGrantable) awsiam.Grant {
	core := t.bound("GrantModify")
	return grants.Table(core.Table, grantee, "dynamodb:PutItem", "dynamodb:DeleteItem")
}

// GrantDisarm implements TimerBinding: delete items of the table (a
// marker's conditional DeleteItem).
func (t *TTLTimer) GrantDisarm(grantee awsiam.IGrantable) awsiam.Grant {
	core := t.bound("GrantDisarm")
	return grants.Table(core.Table, grantee, "dynamodb:DeleteItem")
}

// GrantRead implements TimerBinding: read single items and scan the
// table (the markers are items of it, found by their key prefix).
func (t *TTLTimer) GrantRead(grantee awsiam.IGrantable) awsiam.Grant {
	core := t.bound("GrantRead")
	return grants.Table(core.Table, grantee, "dynamodb:GetItem", "dynamodb:Scan")
}

// Alarms implements TimerBinding: the failure queue's, the failed
// dispatches', and the TTL watch's two.
func (t *TTLTimer) Alarms() []awscloudwatch.Alarm {
	t.bound("Alarms")
	return []awscloudwatch.Alarm{t.TTLFailureAlarm, t.TTLDispatchFailedAlarm, t.TTLOverdueAlarm, t.TTLWatchErrorsAlarm}
}

// TTLAttribute is the attribute the markers expire through (defaults
// filled once the timer is planned).
func (t *TTLTimer) TTLAttribute() string { return t.props.TTLAttribute }

// MetricTTLDispatchFailed counts TTL deletions whose firing failed.
// Default: Sum over 5 minutes.
func (t *TTLTimer) MetricTTLDispatchFailed(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	t.bound("MetricTTLDispatchFailed")
	return alarms.Metric(t.scope, metrics.FunctionExpiry, metrics.TTLDispatchFailed, opts)
}

// FireFailures implements TimerBinding: none, the timer invokes the
// firing function synchronously.
func (t *TTLTimer) FireFailures() *FireFailures {
	t.bound("FireFailures")
	return nil
}
