package campaignstest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/unschedule/unschedule/constructs/campaigns"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// timerCase is one of the core's timers as the campaign sends' timer:
// its UNSCHEDULE_TIMER, and the actions of its GrantModify, GrantDisarm
// (the API's: a cancel only deletes) and GrantRead.
type timerCase struct {
	name   string
	timer  func() scheduleonwrite.Timer // nil: the default
	kind   timerspec.Name
	modify []string
	disarm []string
	read   []string
}

var timerCases = []timerCase{
	{name: "Scheduler", kind: timerspec.EventBridgeScheduler,
		modify: []string{"scheduler:CreateSchedule", "scheduler:UpdateSchedule", "scheduler:DeleteSchedule", "iam:PassRole"},
		disarm: []string{"scheduler:DeleteSchedule"},
		read:   []string{"scheduler:GetSchedule", "scheduler:ListSchedules"}},
	{name: "StepFunctions", kind: timerspec.StepFunctions,
		timer:  func() scheduleonwrite.Timer { return scheduleonwrite.NewStepFunctionsTimer(nil) },
		modify: []string{"states:StartExecution", "states:StopExecution", "states:DescribeExecution"},
		disarm: []string{"states:StopExecution", "states:DescribeExecution"},
		read:   []string{"states:ListExecutions", "states:DescribeExecution"}},
	{name: "TTL", kind: timerspec.TTL,
		timer: func() scheduleonwrite.Timer {
			return scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{MaxLateness: awscdk.Duration_Days(jsii.Number(3)), TTLAttribute: limits.ExpiresAttr})
		},
		modify: []string{"dynamodb:PutItem", "dynamodb:DeleteItem"},
		disarm: []string{"dynamodb:DeleteItem"},
		read:   []string{"dynamodb:GetItem", "dynamodb:Scan"}},
}

// timerStack is the construct with one timer, synthesized with the
// AwsSolutions pack applied.
type timerStack struct {
	c        *campaigns.Campaigns
	d        map[string]any
	findings []string
}

var (
	timerMu     sync.Mutex
	timerStacks = map[string]*timerStack{}
)

// synthTimer builds and synthesizes the stack of tc once per process.
func synthTimer(t *testing.T, tc timerCase) *timerStack {
	t.Helper()
	timerMu.Lock()
	defer timerMu.Unlock()
	if s, ok := timerStacks[tc.name]; ok {
		return s
	}
	st := newStack(t)
	p := &campaigns.CampaignsProps{UserPool: pool(st), SenderAddress: "news@example.com"}
	if tc.timer != nil {
		p.Timer = tc.timer()
	}
	s := &timerStack{c: campaigns.NewCampaigns(st, jsii.String("Campaigns"), p)}
	awscdk.Aspects_Of(st).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	s.d = *assertions.Template_FromStack(st, nil).ToJSON()
	ann := assertions.Annotations_FromStack(st)
	rule := assertions.Match_StringLikeRegexp(jsii.String("AwsSolutions-.*"))
	for _, m := range append(*ann.FindError(jsii.String("*"), rule), *ann.FindWarning(jsii.String("*"), rule)...) {
		//lint:ignore SA1019 Annotations returns this type; the Go binding has no other
		finding := fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data)
		if !strings.HasPrefix(finding, "/CampaignsTest/Users") { // the test's own user pool
			s.findings = append(s.findings, finding)
		}
	}
	timerStacks[tc.name] = s
	return s
}

// TestNoUnsuppressedNagFindings applies the AwsSolutions pack (as app.go
// does) to the construct with each timer and fails on any finding not
// suppressed with a reason.
func TestNoUnsuppressedNagFindings(t *testing.T) {
	for _, tc := range timerCases {
		t.Run(tc.name, func(t *testing.T) {
			if f := synthTimer(t, tc).findings; len(f) > 0 {
				t.Fatalf("%d unsuppressed cdk-nag findings:\n%s", len(f), strings.Join(f, "\n"))
			}
		})
	}
}

// TestTimerResources: each timer builds its own resources, bound to the
// send function: the Scheduler timer its group, the role the schedules
// run as (trusting the scheduler for that group only) and its
// dead-letter queue; the Step Functions timer a state machine invoking
// the send function; the TTL timer TTL and old images on the table and a
// stream mapping to the send function. None builds another's.
func TestTimerResources(t *testing.T) {
	for _, tc := range timerCases {
		t.Run(tc.name, func(t *testing.T) {
			d := synthTimer(t, tc).d
			send := logical(t, d, "AWS::Lambda::Function", "CampaignsSend")
			counts := map[string]int{}
			for _, typ := range []string{"AWS::Scheduler::ScheduleGroup", "AWS::StepFunctions::StateMachine", "AWS::Lambda::EventSourceMapping"} {
				counts[typ] = len(resources(d, typ))
			}
			table := props(resources(d, "AWS::DynamoDB::Table")[logical(t, d, "AWS::DynamoDB::Table", "CampaignsTable")])
			// Every table has TTL on the limits' counters' attribute.
			if got := js(table["TimeToLiveSpecification"]); got != `{"AttributeName":"`+limits.ExpiresAttr+`","Enabled":true}` {
				t.Errorf("table TTL %s, want on %s", got, limits.ExpiresAttr)
			}
			stream := js(table["StreamSpecification"])
			switch tc.kind {
			case timerspec.EventBridgeScheduler:
				want := map[string]int{"AWS::Scheduler::ScheduleGroup": 1, "AWS::StepFunctions::StateMachine": 0, "AWS::Lambda::EventSourceMapping": 1}
				if js(counts) != js(want) {
					t.Errorf("resources %v, want %v", counts, want)
				}
				role := props(resources(d, "AWS::IAM::Role")[logical(t, d, "AWS::IAM::Role", "CampaignsSchedulerRole")])
				if trust := js(role["AssumeRolePolicyDocument"]); !strings.Contains(trust, `"aws:SourceArn"`) || !strings.Contains(trust, ":schedule-group/"+groupName(t, d)) {
					t.Errorf("scheduler role trust %s: want the confused-deputy condition on the group", trust)
				}
				logical(t, d, "AWS::SQS::Queue", "CampaignsScheduleDeadLetterQueue")
			case timerspec.StepFunctions:
				want := map[string]int{"AWS::Scheduler::ScheduleGroup": 0, "AWS::StepFunctions::StateMachine": 1, "AWS::Lambda::EventSourceMapping": 1}
				if js(counts) != js(want) {
					t.Errorf("resources %v, want %v", counts, want)
				}
				sm := props(resources(d, "AWS::StepFunctions::StateMachine")[logical(t, d, "AWS::StepFunctions::StateMachine", "CampaignsStateMachine")])
				if def := js(sm["DefinitionString"]); !strings.Contains(def, send) || !strings.Contains(def, timerspec.WaitState) {
					t.Errorf("state machine definition %s: want a wait, then the send function %s", def, send)
				}
			case timerspec.TTL:
				want := map[string]int{"AWS::Scheduler::ScheduleGroup": 0, "AWS::StepFunctions::StateMachine": 0, "AWS::Lambda::EventSourceMapping": 2}
				if js(counts) != js(want) {
					t.Errorf("resources %v, want %v (progress and the TTL mapping)", counts, want)
				}
				// Live progress reads new images, the TTL filter old ones.
				if stream != `{"StreamViewType":"NEW_AND_OLD_IMAGES"}` {
					t.Errorf("table stream %s, want NEW_AND_OLD_IMAGES", stream)
				}
				if m := mappingOf(t, d, send); !strings.Contains(js(m["FilterCriteria"]), timerspec.MarkerPayloadAttr) {
					t.Errorf("TTL mapping %s: want the TTL filter", js(m))
				}
				return
			}
			if stream != `{"StreamViewType":"NEW_IMAGE"}` {
				t.Errorf("table stream %s, want NEW_IMAGE (live progress only)", stream)
			}
		})
	}
}

// environment is a function's environment variables.
func environment(t *testing.T, d map[string]any, fnPrefix string) map[string]any {
	t.Helper()
	fn := props(resources(d, "AWS::Lambda::Function")[logical(t, d, "AWS::Lambda::Function", fnPrefix)])
	return fn["Environment"].(map[string]any)["Variables"].(map[string]any)
}

// TestTimerEnvironmentAndGrants: provisioning, the API and the reconciler
// read the timer's environment (UNSCHEDULE_TIMER and the timer's own
// variables, nothing of another timer's) and get its GrantModify (the
// reconciler GrantRead too), on the timer's resources only.
func TestTimerEnvironmentAndGrants(t *testing.T) {
	timerVars := []string{envvars.ScheduleGroup, envvars.SchedulerRoleArn, envvars.SchedulerDLQArn, envvars.ScheduleTargetArn,
		envvars.StateMachineArn, envvars.TTLAttribute, envvars.ScheduleRetries, envvars.ScheduleMaxEventAge}
	for _, tc := range timerCases {
		s := synthTimer(t, tc)
		d := s.d
		own := s.c.Timer.Environment()
		// The timer's resources, as they appear in a grant's resources.
		var where []string
		switch tc.kind {
		case timerspec.EventBridgeScheduler:
			where = []string{":schedule/" + groupName(t, d) + "/*", logical(t, d, "AWS::IAM::Role", "CampaignsSchedulerRole"), `"*"`}
		case timerspec.StepFunctions:
			where = []string{logical(t, d, "AWS::StepFunctions::StateMachine", "CampaignsStateMachine")}
		case timerspec.TTL:
			where = []string{`{"Fn::GetAtt":["` + logical(t, d, "AWS::DynamoDB::Table", "CampaignsTable") + `","Arn"]}`}
		}
		for _, fn := range []string{"CampaignsProvision", "CampaignsApi", "CampaignsReconciler"} {
			t.Run(tc.name+"/"+fn, func(t *testing.T) {
				env := environment(t, d, fn)
				if env[envvars.TimerKind] != string(tc.kind) {
					t.Errorf("%s = %v, want %s", envvars.TimerKind, env[envvars.TimerKind], tc.kind)
				}
				if env[envvars.ItemSchema] != campaign.TaskSchema.EnvValue() {
					t.Errorf("%s = %v, want the send tasks' schema %s", envvars.ItemSchema, env[envvars.ItemSchema], campaign.TaskSchema.EnvValue())
				}
				for _, k := range timerVars {
					if _, has := env[k]; has != (own[k] != "") {
						t.Errorf("%s set = %v, want it exactly when the timer's environment has it", k, has)
					}
				}
				if _, has := env[campaignenv.SendFunctionArn]; has != (fn == "CampaignsReconciler") {
					t.Errorf("%s set = %v: only the reconciler invokes the send function itself", campaignenv.SendFunctionArn, has)
				}
				got := actions(d, roleOf(t, d, fn))
				want := tc.modify
				switch fn {
				case "CampaignsReconciler":
					want = append(slices.Clone(want), tc.read...)
				case "CampaignsApi":
					want = tc.disarm // the cancel's Delete is its only timer call
				}
				for _, a := range want {
					res, ok := got[a]
					if !ok {
						t.Errorf("lacks %s", a)
						continue
					}
					if !slices.ContainsFunc(where, func(w string) bool { return strings.Contains(res, w) }) {
						t.Errorf("%s on %s: want the timer's resources only (%v)", a, res, where)
					}
				}
				for a, res := range got {
					timerAction := strings.HasPrefix(a, "scheduler:") || strings.HasPrefix(a, "states:") || a == "iam:PassRole" || a == "dynamodb:DeleteItem" || a == "dynamodb:Scan"
					if timerAction && !slices.Contains(want, a) {
						t.Errorf("allows %s on %s: not the timer's grant for this function", a, res)
					}
					if res == `"*"` && a != "scheduler:ListSchedules" {
						t.Errorf("%s on *", a)
					}
				}
			})
		}
	}
}

// mappingOf is the event source mapping of the function with logical id
// fn.
func mappingOf(t *testing.T, d map[string]any, fn string) map[string]any {
	t.Helper()
	for _, m := range resources(d, "AWS::Lambda::EventSourceMapping") {
		if js(props(m)["FunctionName"]) == `{"Ref":"`+fn+`"}` {
			return props(m)
		}
	}
	t.Fatalf("no event source mapping of %s", fn)
	return nil
}

// patterns are a mapping's filter patterns.
func patterns(t *testing.T, m map[string]any) []any {
	t.Helper()
	var out []any
	for _, f := range m["FilterCriteria"].(map[string]any)["Filters"].([]any) {
		var p any
		if err := json.Unmarshal([]byte(f.(map[string]any)["Pattern"].(string)), &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// TestTTLMarkersStayOffTheProgressStream: the TTL timer's markers are
// items of the campaign table, so their writes reach its stream; the
// progress function's filter drops every one of them (it passes a send
// task's change), and the TTL mapping passes only a marker's TTL
// deletion (not a cancel, nor a limits counter's expiry).
func TestTTLMarkersStayOffTheProgressStream(t *testing.T) {
	d := synthTimer(t, timerCases[2]).d
	progress := patterns(t, mappingOf(t, d, logical(t, d, "AWS::Lambda::Function", "CampaignsProgress")))
	ttl := patterns(t, mappingOf(t, d, logical(t, d, "AWS::Lambda::Function", "CampaignsSend")))

	schema := campaign.TaskSchema
	marker := timerspec.MarkerKey(schema, schema.ScheduleName(campaign.ItemKey(campaign.Key{CampaignID: "c1", TaskID: "t1"})))
	keys := fmt.Sprintf(`{"pk":{"S":%q},"sk":{"S":%q}}`, marker.Partition, marker.Sort)
	image := fmt.Sprintf(`{"pk":{"S":%q},"sk":{"S":%q},%q:{"N":"1767225600"},%q:{"S":"{}"}}`,
		marker.Partition, marker.Sort, limits.ExpiresAttr, timerspec.MarkerPayloadAttr)
	byTTL := `"userIdentity":{"type":"Service","principalId":"dynamodb.amazonaws.com"},`
	records := map[string]string{
		"marker put":          `{"eventName":"INSERT","dynamodb":{"Keys":` + keys + `,"NewImage":` + image + `}}`,
		"marker moved":        `{"eventName":"MODIFY","dynamodb":{"Keys":` + keys + `,"NewImage":` + image + `,"OldImage":` + image + `}}`,
		"marker cancelled":    `{"eventName":"REMOVE","dynamodb":{"Keys":` + keys + `,"OldImage":` + image + `}}`,
		"marker expired":      `{"eventName":"REMOVE",` + byTTL + `"dynamodb":{"Keys":` + keys + `,"OldImage":` + image + `}}`,
		"counter expired":     `{"eventName":"REMOVE",` + byTTL + `"dynamodb":{"Keys":{"pk":{"S":"L#sub"},"sk":{"S":"D#2026-01-01"}},"OldImage":{"pk":{"S":"L#sub"},"expiresAt":{"N":"1"}}}}`,
		"send task delivered": `{"eventName":"MODIFY","dynamodb":{"Keys":{"pk":{"S":"C#c1"},"sk":{"S":"T#t1"}},"NewImage":{"state":{"S":"Finished"}}}}`,
	}
	want := map[string][2]bool{ // progress, TTL mapping
		"marker put": {false, false}, "marker moved": {false, false}, "marker cancelled": {false, false},
		"marker expired": {false, true}, "counter expired": {false, false}, "send task delivered": {true, false},
	}
	for name, text := range records {
		var r map[string]any
		if err := json.Unmarshal([]byte(text), &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		passes := func(ps []any) bool { return slices.ContainsFunc(ps, func(p any) bool { return match(p, r) }) }
		if got := [2]bool{passes(progress), passes(ttl)}; got != want[name] {
			t.Errorf("%s: passes progress, TTL mapping = %v, want %v", name, got, want[name])
		}
	}
}
