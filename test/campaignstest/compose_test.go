package campaignstest

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/campaigns"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	"github.com/unschedule/unschedule/internal/core/envvars"
)

// TestStatefulLogicalIdsStay pins the logical ids of every resource of the
// default construct that holds data or that a deploy must not replace
// (the table, every queue, the schedule group, the secrets, the sender
// group, the log groups, the bounce topic and its key): a change of id
// replaces the resource in every deployed stack.
func TestStatefulLogicalIdsStay(t *testing.T) {
	_, d := synth(t)
	want := map[string]string{
		"CampaignsAccessLogs68CAABA1": "AWS::Logs::LogGroup", "CampaignsApiLogs4A8A4A2F": "AWS::Logs::LogGroup",
		"CampaignsBounceDeliveryDLQ6D21D937": "AWS::SQS::Queue", "CampaignsBounceFailureQueue52FAB834": "AWS::SQS::Queue",
		"CampaignsBounceLogs34012561": "AWS::Logs::LogGroup", "CampaignsBounceTopicCE1B8168": "AWS::SNS::Topic",
		"CampaignsBounceTopicKey9BAC08B2": "AWS::KMS::Key", "CampaignsConfigurationSet050A06DB": "AWS::SES::ConfigurationSet",
		"CampaignsEventApiA82DBCF9": "AWS::AppSync::Api", "CampaignsEventApiLogsD1EAB63A": "AWS::Logs::LogGroup",
		"CampaignsExpiryFailureQueueA8D03B40": "AWS::SQS::Queue", "CampaignsPageCursorSecret153A5A01": "AWS::SecretsManager::Secret",
		"CampaignsProgressFailureQueueD87A0D3A": "AWS::SQS::Queue", "CampaignsProgressLogs746334DA": "AWS::Logs::LogGroup",
		"CampaignsProvisionFailureQueue5AAD924A": "AWS::SQS::Queue", "CampaignsProvisionLogsB2DDA54A": "AWS::Logs::LogGroup",
		"CampaignsReconcilerFailureQueue443926BF": "AWS::SQS::Queue", "CampaignsReconcilerLogs598B4B27": "AWS::Logs::LogGroup",
		"CampaignsScheduleDeadLetterQueueA6FC81DB": "AWS::SQS::Queue", "CampaignsScheduleGroup1A702B1A": "AWS::Scheduler::ScheduleGroup",
		"CampaignsSendLogs6C9DB259": "AWS::Logs::LogGroup", "CampaignsSenderGroup3791E22A": "AWS::Cognito::UserPoolGroup",
		"CampaignsTable1934312B": "AWS::DynamoDB::Table", "CampaignsUnsubscribeAccessLogs054E19F1": "AWS::Logs::LogGroup",
		"CampaignsUnsubscribeLogs2CF0D6BA": "AWS::Logs::LogGroup", "CampaignsUnsubscribeSecret84C4A03D": "AWS::SecretsManager::Secret",
	}
	types := map[string]bool{}
	for _, typ := range want {
		types[typ] = true
	}
	got := map[string]string{}
	for typ := range types {
		for id := range resources(d, typ) {
			if strings.HasPrefix(id, "Campaigns") {
				got[id] = typ
			}
		}
	}
	for id, typ := range want {
		if got[id] != typ {
			t.Errorf("no %s %s: a deploy would replace it (keep its construct path)", typ, id)
		}
	}
	for id, typ := range got {
		if want[id] == "" {
			t.Errorf("new %s %s: pin it here once its id is final", typ, id)
		}
	}
}

// wrappedTimer is the Scheduler timer behind a binding of another type:
// the construct must reach what it needs of a timer through TimerBinding,
// never through the timer's concrete type.
type wrappedTimer struct {
	*scheduleonwrite.SchedulerTimer
	env func(map[string]string) map[string]string
}

func (w wrappedTimer) Bind(c constructs.Construct, core scheduleonwrite.TimerCore) scheduleonwrite.TimerBinding {
	w.SchedulerTimer.Bind(c, core)
	return w
}

func (w wrappedTimer) Environment() map[string]string { return w.env(w.SchedulerTimer.Environment()) }

// TestTimerStepsAreTheCore's: the construct plans and binds its timer
// with the core's steps (scheduleonwrite.PlanTimer, then Bind), and takes
// the send function's failure queue from the binding (FireFailures):
// with a timer that is no *SchedulerTimer, SendAsync is still the timer's
// and no second EventInvokeConfig is made; a binding whose environment
// leaves its kind out is refused, as ScheduleOnWrite refuses it, instead
// of being patched by hand.
func TestTimerStepsAreTheCores(t *testing.T) {
	t.Run("failure queue through the binding", func(t *testing.T) {
		st := newStack(t)
		timer := wrappedTimer{SchedulerTimer: scheduleonwrite.NewSchedulerTimer(nil), env: func(m map[string]string) map[string]string { return m }}
		var c *campaigns.Campaigns
		check(t, func() {
			c = campaigns.NewCampaigns(st, jsii.String("Campaigns"), &campaigns.CampaignsProps{UserPool: pool(st), SenderAddress: "news@example.com", Timer: timer})
		})
		f := timer.FireFailures()
		if c.SendAsync.Queue == nil || c.SendAsync.Queue != f.Queue || c.SendAsync.FailureAlarm != f.FailureAlarm ||
			c.SendAsync.DroppedAlarm != f.DroppedAlarm || c.SendAsync.DeliveryFailureAlarm != f.DeliveryFailureAlarm {
			t.Fatalf("SendAsync %+v, want the timer's FireFailures %+v", c.SendAsync, *f)
		}
		all := c.Alarms()
		for _, a := range []awscloudwatch.Alarm{f.FailureAlarm, f.DroppedAlarm, f.DeliveryFailureAlarm} {
			if n := len(slices.DeleteFunc(slices.Clone(all), func(b awscloudwatch.Alarm) bool { return b != a })); n != 1 {
				t.Errorf("Alarms() lists %s %d times, want once", *a.Node().Path(), n)
			}
		}
		if c.Send.Function.Node().TryFindChild(jsii.String("EventInvokeConfig")) == nil {
			t.Fatal("the send function has no EventInvokeConfig: the timer's is missing")
		}
	})
	t.Run("a binding that does not name its kind", func(t *testing.T) {
		got := buildPanic(t, func(p *campaigns.CampaignsProps) {
			p.Timer = wrappedTimer{SchedulerTimer: scheduleonwrite.NewSchedulerTimer(nil), env: func(m map[string]string) map[string]string {
				delete(m, envvars.TimerKind)
				return m
			}}
		})
		if !strings.Contains(got, "does not name its kind ("+envvars.TimerKind+")") {
			t.Fatalf("panic %q, want the core's check that the binding names its kind", got)
		}
	})
}

// TestReconcilerIsTheCoreConstruct: the campaign reconciler's rule,
// failure queue and Errors alarm are built by the core's reconciler
// construct (constructs/reconciler, on the campaign function), not by the
// campaigns construct beside it, and its environment carries the timer's
// and the send function's, which that construct adds.
func TestReconcilerIsTheCoreConstruct(t *testing.T) {
	synth(t)
	core := *c.Node().Path() + "/Default/"
	for name, path := range map[string]*string{"ReconcileRule": c.ReconcileRule.Node().Path(),
		"ReconcilerAsync.Queue": c.ReconcilerAsync.Queue.Node().Path(), "ErrorsAlarms.Reconciler": c.ErrorsAlarms.Reconciler.Node().Path()} {
		if !strings.HasPrefix(*path, core) {
			t.Errorf("%s is %s, want a child of the core's reconciler construct %s", name, *path, core)
		}
	}
	_, d := synth(t)
	env := environment(t, d, "CampaignsReconciler")
	for _, k := range append(slices.Sorted(maps.Keys(c.Timer.Environment())), campaignenv.SendFunctionArn) {
		if _, ok := env[k]; !ok {
			t.Errorf("the reconciler's environment lacks %s: %s", k, js(env))
		}
	}
}
