// Package alarms holds the CloudWatch builders every construct shares: the
// project's custom metrics (dimensioned by stack and function, as
// internal/core/metrics writes them) and alarms that notify a topic.
package alarms

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
)

// CustomMetric is the metric name that function fn of scope's stack
// writes (internal/core/metrics), with its Stack and Function dimensions, so
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
	return envvars.MetricsStack, *awscdk.Stack_Of(scope).StackName()
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

// Metric is what a construct's Metric...() method returns for metric name
// of its function fn: the Sum over 5 minutes of CustomMetric, with opts
// (may be nil) overriding the statistic, period, label and so on.
func Metric(scope constructs.Construct, fn, name string, opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	m := CustomMetric(scope, fn, name, "Sum", nil)
	if opts == nil {
		return m
	}
	return m.With(opts)
}

// Watches tells which custom metric an alarm watches: the function (its
// Function dimension) and the metric name. ok is false for an alarm on
// anything else (a Lambda or queue metric, metric math).
func Watches(a awscloudwatch.IAlarm) (fn, name string, ok bool) {
	al, isAlarm := a.(awscloudwatch.Alarm)
	if !isAlarm {
		return "", "", false
	}
	m, isMetric := al.Metric().(awscloudwatch.Metric)
	if !isMetric || m.Namespace() == nil || *m.Namespace() != metrics.Namespace || m.Dimensions() == nil {
		return "", "", false
	}
	f, has := (*m.Dimensions())[metrics.DimensionFunction]
	s, isString := f.(*string)
	if !has || !isString || s == nil {
		if str, isPlain := f.(string); isPlain {
			return str, *m.MetricName(), true
		}
		return "", "", false
	}
	return *s, *m.MetricName(), true
}

// SumOptions are the options of a Metric...() method over a CloudWatch
// metric (Lambda, API Gateway, SQS): Sum over 5 minutes, with opts (may be
// nil) overriding any field.
func SumOptions(opts *awscloudwatch.MetricOptions) *awscloudwatch.MetricOptions {
	o := awscloudwatch.MetricOptions{Statistic: jsii.String("Sum"), Period: awscdk.Duration_Minutes(jsii.Number(5))}
	if opts == nil {
		return &o
	}
	if opts.Statistic != nil {
		o.Statistic = opts.Statistic
	}
	if opts.Period != nil {
		o.Period = opts.Period
	}
	merged := *opts
	merged.Statistic, merged.Period = o.Statistic, o.Period
	return &merged
}
