package alarms

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/internal/core/metrics"
)

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
		out[name] = AtLeast(scope, prefix+name+"Alarm", d, Metric(scope, fn, name, nil), 1, topic)
	}
	return out
}

// Assign stores each alarm of m (what ErrorMetricAlarms built for
// function fn) in the construct field fields names for its metric. A
// metric without a field, or a field without an alarm, panics at synth:
// a construct's typed alarm fields cannot drift from
// metrics.ErrorMetrics.
func Assign(fn string, m map[string]awscloudwatch.Alarm, fields map[string]*awscloudwatch.Alarm) {
	for name, a := range m {
		f, ok := fields[name]
		if !ok {
			panic("alarms: no field for the alarm on error metric " + name + " of function " + fn + ": add one to the construct")
		}
		*f = a
	}
	for name := range fields {
		if _, ok := m[name]; !ok {
			panic("alarms: field for " + name + ", which is no error metric of function " + fn + " (metrics.ErrorMetrics): remove it")
		}
	}
}

// QueueNotEmpty alarms as soon as a queue holds a message (its maximum
// visible messages over one minute). Used for every dead-letter and
// failure queue.
func QueueNotEmpty(scope constructs.Construct, id string, q awssqs.IQueue, description string, topic awssns.ITopic) awscloudwatch.Alarm {
	return AtLeast(scope, id, description, q.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
		Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum"),
	}), 1, topic)
}

// NonNil is all without its nil alarms (those of an absent resource), in
// order: what a construct's Alarms method returns.
func NonNil(all ...awscloudwatch.Alarm) []awscloudwatch.Alarm {
	var out []awscloudwatch.Alarm
	for _, a := range all {
		if a != nil {
			out = append(out, a)
		}
	}
	return out
}
