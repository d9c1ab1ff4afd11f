package scheduleonwrite

import (
	"math"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
)

// DefaultFireTimeoutSec is ScheduleOnWriteProps.FireTimeout's
// default; the timers' defaults are by their props.
const DefaultFireTimeoutSec = 10

// EnvTargetFunction is the environment variable through which the firing
// function learns the adopter's target (ScheduleOnWriteProps.Target).
const EnvTargetFunction = envvars.TargetFunctionArn

// EnvFireLease (envvars.FireLeaseSeconds) is the firing function's delivery
// lease in seconds: the function's timeout plus FireLeaseMarginSec, at
// least 60, so a retried firing never takes over from an attempt whose
// target may still be running.
const EnvFireLease = envvars.FireLeaseSeconds

// FireLeaseMarginSec is what the lease adds to the firing function's timeout, and
// MinFireLeaseSec its floor (fire.DefaultLease).
const (
	FireLeaseMarginSec = 30
	MinFireLeaseSec    = 60
)

// fireLeaseSec is the delivery lease of a firing function whose timeout
// is expirySec.
func fireLeaseSec(expirySec float64) float64 {
	return math.Max(MinFireLeaseSec, expirySec+FireLeaseMarginSec)
}

// TableProps are the props of the table the construct creates for a
// schema: on-demand, point-in-time recovery, encryption, a stream with
// both images (the cancellation pipeline compares them), keyed as the
// schema says. Build your own ExistingTable from them to add indexes.
func TableProps(s contract.Schema, removal awscdk.RemovalPolicy, protect bool) *awsdynamodb.TableProps {
	p := &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String(s.PartitionKey), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:         awsdynamodb.TableEncryption_AWS_MANAGED,
		Stream:             awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES,
		RemovalPolicy:      removal,
		DeletionProtection: jsii.Bool(protect),
	}
	if !s.NoSortKey {
		p.SortKey = &awsdynamodb.Attribute{Name: jsii.String(s.SortKey), Type: awsdynamodb.AttributeType_STRING}
	}
	return p
}

func withDefaults(id string, props *ScheduleOnWriteProps) ScheduleOnWriteProps {
	var p ScheduleOnWriteProps
	if props != nil {
		p = *props
	}
	propcheck.CheckTimer(id, "Timer", p.Timer, "scheduleonwrite.NewSchedulerTimer(...), NewStepFunctionsTimer(...) or NewTTLTimer(...)"+
		", one per ScheduleOnWrite; or leave Timer unset for NewSchedulerTimer(nil)")
	p.Schema = propcheck.Schema(p.Schema)
	if p.RemovalPolicy == "" {
		p.RemovalPolicy = awscdk.RemovalPolicy_RETAIN
	}
	seconds := func(n float64) awscdk.Duration { return awscdk.Duration_Seconds(jsii.Number(n)) }
	p.FireTimeout = propcheck.DurationOr(p.FireTimeout, seconds(DefaultFireTimeoutSec))
	if p.Timer == nil {
		p.Timer = NewSchedulerTimer(nil)
	}
	return p
}
