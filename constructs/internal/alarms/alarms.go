// Package alarms holds the CloudWatch builders every construct shares: the
// project's custom metrics (dimensioned by stack and function, as
// internal/metrics writes them) and alarms that notify a topic.
package alarms

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/internal/metrics"
)

// CustomMetric is the metric name that function fn of scope's stack
// writes (internal/metrics), with its Stack and Function dimensions, so
// two stacks in one account and region never share a metric.
// statistic is e.g. "Sum" or "p99"; period defaults to 5 minutes.
func CustomMetric(scope constructs.Construct, fn, name, statistic string, period awscdk.Duration) awscloudwatch.Metric {
	if period == nil {
		period = awscdk.Duration_Minutes(jsii.Number(5))
	}
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:  jsii.String(metrics.Namespace),
		MetricName: jsii.String(name),
		DimensionsMap: &map[string]*string{
			metrics.DimensionStack:    awscdk.Stack_Of(scope).StackName(),
			metrics.DimensionFunction: jsii.String(fn),
		},
		Statistic: jsii.String(statistic),
		Period:    period,
	})
}

// StackEnvironment is the environment a function needs for its metrics
// to carry the Stack dimension (set by constructs/gofn on every function).
func StackEnvironment(scope constructs.Construct) (string, string) {
	return metrics.StackEnv, *awscdk.Stack_Of(scope).StackName()
}

// AtLeast is an alarm that fires when metric reaches threshold in one
// period; missing data is not breaching. Its state changes go to topic.
func AtLeast(scope constructs.Construct, id, description string, metric awscloudwatch.IMetric, threshold float64, topic awssns.ITopic) awscloudwatch.Alarm {
	return New(scope, id, description, metric, threshold, awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD, topic)
}

// New is an alarm that compares metric with threshold over one period;
// missing data is not breaching. Its state changes go to topic.
func New(scope constructs.Construct, id, description string, metric awscloudwatch.IMetric, threshold float64,
	op awscloudwatch.ComparisonOperator, topic awssns.ITopic) awscloudwatch.Alarm {
	a := awscloudwatch.NewAlarm(scope, jsii.String(id), &awscloudwatch.AlarmProps{
		AlarmDescription:   jsii.String(description),
		Metric:             metric,
		Threshold:          jsii.Number(threshold),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: op,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
	AddActions(a, topic)
	return a
}

// AddActions sends the alarm's state changes (ALARM and OK) to topic
// (no-op for nil).
func AddActions(a awscloudwatch.Alarm, topic awssns.ITopic) {
	if topic == nil {
		return
	}
	a.AddAlarmAction(awscloudwatchactions.NewSnsAction(topic))
	a.AddOkAction(awscloudwatchactions.NewSnsAction(topic))
}

// FunctionMetric is CustomMetric with the options of a construct's
// Metric...() method applied: Sum over 5 minutes unless opts says
// otherwise.
func FunctionMetric(scope constructs.Construct, fn, name string, opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	m := CustomMetric(scope, fn, name, "Sum", nil)
	if opts != nil {
		m = m.With(opts)
	}
	return m
}

// ErrorMetricAlarms adds one alarm per error metric that function fn
// writes (metrics.ErrorMetrics[fn]): it fires when the metric's Sum over 5
// minutes reaches 1. describe holds each alarm's description (what
// happened and what to do); a metric without one panics, so a new error
// metric cannot be left without an alarm. Alarm ids are <prefix><name>Alarm.
func ErrorMetricAlarms(scope constructs.Construct, prefix, fn string, describe map[string]string, topic awssns.ITopic) map[string]awscloudwatch.Alarm {
	out := map[string]awscloudwatch.Alarm{}
	for _, name := range metrics.ErrorMetrics[fn] {
		d, ok := describe[name]
		if !ok {
			panic("alarms: no description for error metric " + name + " of function " + fn)
		}
		out[name] = AtLeast(scope, prefix+name+"Alarm", d, FunctionMetric(scope, fn, name, nil), 1, topic)
	}
	return out
}

// QueueNotEmpty alarms as soon as a queue holds a message (its maximum
// visible messages over one minute). Used for every dead-letter and
// failure queue.
func QueueNotEmpty(scope constructs.Construct, id string, q awssqs.IQueue, description string, topic awssns.ITopic) awscloudwatch.Alarm {
	return AtLeast(scope, id, description, q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
		Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum"),
	}), 1, topic)
}
