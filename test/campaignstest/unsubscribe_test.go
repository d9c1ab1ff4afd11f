package campaignstest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/campaigns"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// throttle is one stage's throttling of one method path ("/*/*" is the
// stage's default), as CloudFormation's MethodSettings hold it.
type throttle struct{ rate, burst float64 }

// stageThrottles maps each stage's RestApi logical id to its throttles by
// "<resource path> <method>".
func stageThrottles(d map[string]any) map[string]map[string]throttle {
	out := map[string]map[string]throttle{}
	for _, st := range resources(d, "AWS::ApiGateway::Stage") {
		p := props(st)
		api := p["RestApiId"].(map[string]any)["Ref"].(string)
		out[api] = map[string]throttle{}
		settings, _ := p["MethodSettings"].([]any)
		for _, s := range settings {
			m := s.(map[string]any)
			rate, _ := m["ThrottlingRateLimit"].(float64)
			burst, _ := m["ThrottlingBurstLimit"].(float64)
			out[api][fmt.Sprint(m["ResourcePath"], " ", m["HttpMethod"])] = throttle{rate, burst}
		}
	}
	return out
}

// methodsOf lists "<path part> <method>" of each RestApi's methods
// (OPTIONS left out), by the RestApi's logical id.
func methodsOf(d map[string]any) map[string][]string {
	out := map[string][]string{}
	parts := map[string]string{}
	for id, r := range resources(d, "AWS::ApiGateway::Resource") {
		parts[id] = fmt.Sprint(props(r)["PathPart"])
	}
	for _, m := range resources(d, "AWS::ApiGateway::Method") {
		p := props(m)
		if p["HttpMethod"] == "OPTIONS" {
			continue
		}
		api := p["RestApiId"].(map[string]any)["Ref"].(string)
		part := "/"
		if ref, ok := p["ResourceId"].(map[string]any)["Ref"].(string); ok {
			part = parts[ref]
		}
		out[api] = append(out[api], part+" "+fmt.Sprint(p["HttpMethod"]))
	}
	return out
}

// throttledStack is the construct with the senders' limits at 1/1 and
// the unsubscribe limits at 70/140.
func throttledStack(t *testing.T) (*campaigns.Campaigns, map[string]any) {
	t.Helper()
	st := newStack(t)
	x := campaigns.NewCampaigns(st, jsii.String("Campaigns"), &campaigns.CampaignsProps{UserPool: pool(st), SenderAddress: "news@example.com",
		ThrottlingRateLimit: 1, ThrottlingBurstLimit: 1, UnsubscribeThrottlingRateLimit: 70, UnsubscribeThrottlingBurstLimit: 140})
	return x, *assertions.Template_FromStack(st, nil).ToJSON()
}

// TestUnsubscribeThrottledApartFromTheSenders: the public unsubscribe
// routes never share a throttle with the senders' routes. The emails link
// an API of their own, whose stage carries the unsubscribe limits and
// holds no campaign route; the campaign API's /unsubscribe (links of
// emails sent before) has method-level limits, which API Gateway applies
// over the stage's. Senders' limits of 1/1 change nothing of either.
func TestUnsubscribeThrottledApartFromTheSenders(t *testing.T) {
	x, d := throttledStack(t)
	senders := logical(t, d, "AWS::ApiGateway::RestApi", "CampaignsRestApi")
	unsub := logical(t, d, "AWS::ApiGateway::RestApi", "CampaignsUnsubscribeApi")
	throttles, methods := stageThrottles(d), methodsOf(d)
	own := throttle{70, 140}

	if got := throttles[unsub]["/* *"]; got != own {
		t.Errorf("unsubscribe stage throttles %+v, want its own %+v", got, own)
	}
	if got := fmt.Sprint(methods[unsub]); !strings.Contains(got, "unsubscribe GET") || !strings.Contains(got, "unsubscribe POST") || len(methods[unsub]) != 2 {
		t.Errorf("unsubscribe API methods %v, want GET and POST /unsubscribe only (no senders' route)", methods[unsub])
	}
	if got := throttles[senders]["/* *"]; got != (throttle{1, 1}) {
		t.Errorf("campaign stage throttles %+v, want the senders' 1/1", got)
	}
	for _, m := range []string{"GET", "POST"} {
		if got := throttles[senders]["/~1unsubscribe "+m]; got != own {
			t.Errorf("campaign stage's /unsubscribe %s throttles %+v, want its own method-level %+v", m, got, own)
		}
	}
	// The emails link the unsubscribe API, never the campaign API.
	url := envOf(t, d, "CampaignsSend")[campaignenv.UnsubscribeURL]
	if !strings.Contains(url, `{"Ref":"`+unsub+`"}`) || strings.Contains(url, senders) || !strings.Contains(url, "/prod/unsubscribe") {
		t.Errorf("the send function's %s = %s, want the unsubscribe API's /prod/unsubscribe", campaignenv.UnsubscribeURL, url)
	}
	if x.Deliverability.UnsubscribeApi == nil || x.Deliverability.UnsubscribeApi == x.RestApi {
		t.Error("Deliverability.UnsubscribeApi is not an API of its own")
	}
	// Its stage waits for the campaign stage, and so for the account's
	// API Gateway logging role its ERROR logging needs.
	stage := resources(d, "AWS::ApiGateway::Stage")[logical(t, d, "AWS::ApiGateway::Stage", "CampaignsUnsubscribeApiDeploymentStage")]
	if !strings.Contains(js(stage["DependsOn"]), logical(t, d, "AWS::ApiGateway::Stage", "CampaignsRestApiDeploymentStage")) {
		t.Errorf("unsubscribe stage depends on %s, want the campaign stage", js(stage["DependsOn"]))
	}
}

// TestSuppressionListWritersStayInTheirPartition: the bounce and
// unsubscribe functions may put items of the suppression list's partition
// only (dynamodb:LeadingKeys), and every function of the list reads its
// id from SUPPRESSION_LIST: the prop's, in lower case, or "default".
func TestSuppressionListWritersStayInTheirPartition(t *testing.T) {
	for _, tc := range []struct{ name, prop, env, partition string }{
		{"default", "", "default", "S#default"},
		{"named", "News@Example.com", "News@Example.com", "S#news@example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d map[string]any
			if tc.prop == "" {
				_, d = synth(t)
			} else {
				st := newStack(t)
				campaigns.NewCampaigns(st, jsii.String("Campaigns"), &campaigns.CampaignsProps{UserPool: pool(st),
					SenderAddress: "news@example.com", SuppressionListId: tc.prop})
				d = *assertions.Template_FromStack(st, nil).ToJSON()
			}
			for _, fn := range []string{"CampaignsBounce", "CampaignsUnsubscribe", "CampaignsSend"} {
				if got := envOf(t, d, fn)[campaignenv.SuppressionList]; got != js(tc.env) {
					t.Errorf("%s: %s = %s, want %q", fn, campaignenv.SuppressionList, got, tc.env)
				}
			}
			for _, fn := range []string{"CampaignsBounce", "CampaignsUnsubscribe"} {
				puts := 0
				for _, s := range statements(d, roleOf(t, d, fn)) {
					if !strings.Contains(js(s["Action"]), "dynamodb:") {
						continue
					}
					puts++
					want := `{"ForAllValues:StringEquals":{"dynamodb:LeadingKeys":["` + tc.partition + `"]}}`
					if js(s["Action"]) != `"dynamodb:PutItem"` || js(s["Condition"]) != want {
						t.Errorf("%s: %s, want PutItem on %s only (%s)", fn, js(s), tc.partition, want)
					}
				}
				if puts != 1 {
					t.Errorf("%s: %d DynamoDB statements, want one", fn, puts)
				}
			}
		})
	}
}

// TestBounceTopicEncryptedForSesOnly: the bounce topic (recipients'
// addresses) is encrypted with a customer-managed key, rotated, whose
// policy lets SES use it for that topic only (the encryption context SNS
// sends names the topic's ARN, built from its fixed name).
func TestBounceTopicEncryptedForSesOnly(t *testing.T) {
	_, d := synth(t)
	topicID := logical(t, d, "AWS::SNS::Topic", "CampaignsBounceTopic")
	topic := props(resources(d, "AWS::SNS::Topic")[topicID])
	keyID := logical(t, d, "AWS::KMS::Key", "CampaignsBounceTopicKey")
	if got := js(topic["KmsMasterKeyId"]); got != `{"Fn::GetAtt":["`+keyID+`","Arn"]}` {
		t.Fatalf("bounce topic KmsMasterKeyId %s, want the key %s", got, keyID)
	}
	name, _ := topic["TopicName"].(string)
	if name == "" {
		t.Fatalf("bounce topic has no literal TopicName: the key policy cannot name it")
	}
	key := props(resources(d, "AWS::KMS::Key")[keyID])
	if key["EnableKeyRotation"] != true {
		t.Error("bounce topic key is not rotated")
	}
	var ses []string
	for _, s := range key["KeyPolicy"].(map[string]any)["Statement"].([]any) {
		if strings.Contains(js(s), "ses.amazonaws.com") {
			ses = append(ses, js(s))
		}
	}
	if len(ses) != 1 {
		t.Fatalf("%d key policy statements for SES, want one: %v", len(ses), ses)
	}
	for _, want := range []string{`"kms:Decrypt"`, `"kms:GenerateDataKey*"`, `"kms:EncryptionContext:aws:sns:topicArn":{"Fn::Join"`, `:` + name + `"`} {
		if !strings.Contains(ses[0], want) {
			t.Errorf("SES statement %s lacks %s", ses[0], want)
		}
	}
}

// TestCampaignTemplatePassesCfnLint: the to-do app's environments leave
// campaigns off (cdk.json), so ./test's cfn-lint never sees the
// construct: lint its template here, with the default timer (the
// unsubscribe API, the encrypted bounce topic and its key included).
func TestCampaignTemplatePassesCfnLint(t *testing.T) {
	_, d := synth(t)
	testenv.CfnLint(t, d)
}

// gateway plays requests against the synthesized stages' throttles as API
// Gateway documents them: token buckets (a rate refilling up to a burst),
// a method's own settings over its stage's default. Whether a stage's
// default is one bucket for all its methods or one per method, the page
// leaves open; shared picks the first reading.
type gateway struct {
	throttles map[string]map[string]throttle
	shared    bool
	tokens    map[string]float64
}

// request reports whether a call of method on the resource path (e.g.
// "/~1unsubscribe") of the RestApi api passes, taking its token.
func (g *gateway) request(api, path, method string) bool {
	key, limit := api+" "+path+" "+method, g.throttles[api][path+" "+method]
	if limit == (throttle{}) {
		limit = g.throttles[api]["/* *"]
		if g.shared {
			key = api + " /* *"
		}
	}
	tokens, seen := g.tokens[key]
	if !seen {
		tokens = limit.burst
	}
	if tokens < 1 {
		return false
	}
	g.tokens[key] = tokens - 1
	return true
}

// tick refills every bucket by one second of its rate.
func (g *gateway) tick() {
	for key, tokens := range g.tokens {
		parts := strings.SplitN(key, " ", 2) // api, "path method"
		limit := g.throttles[parts[0]][parts[1]]
		if limit == (throttle{}) {
			limit = g.throttles[parts[0]]["/* *"]
		}
		g.tokens[key] = min(limit.burst, tokens+limit.rate)
	}
}

// TestUnsubscribesPassWhileTheSendersAreThrottled plays the synthesized
// throttles: while senders flood the campaign routes (and are answered
// 429), a mailbox provider's one-click POSTs, and page GETs, to both
// unsubscribe routes all pass; and a flood of unsubscribes leaves the
// senders' budget whole. It holds under either reading of a stage's
// default throttle.
func TestUnsubscribesPassWhileTheSendersAreThrottled(t *testing.T) {
	_, d := throttledStack(t)
	senders := logical(t, d, "AWS::ApiGateway::RestApi", "CampaignsRestApi")
	unsub := logical(t, d, "AWS::ApiGateway::RestApi", "CampaignsUnsubscribeApi")
	for _, shared := range []bool{true, false} {
		t.Run(fmt.Sprintf("shared stage bucket %v", shared), func(t *testing.T) {
			g := &gateway{throttles: stageThrottles(d), shared: shared, tokens: map[string]float64{}}
			throttledSenders, lost := 0, 0
			for second := 0; second < 10; second++ {
				for i := 0; i < 100; i++ { // the senders' flood
					if !g.request(senders, "/~1campaigns", "POST") || !g.request(senders, "/~1campaigns~1{id}", "GET") {
						throttledSenders++
					}
				}
				for i := 0; i < 30; i++ { // one-clicks, on the new links and on links already sent
					for _, r := range [][3]string{{unsub, "/~1unsubscribe", "POST"}, {unsub, "/~1unsubscribe", "GET"},
						{senders, "/~1unsubscribe", "POST"}} {
						if !g.request(r[0], r[1], r[2]) {
							lost++
						}
					}
				}
				g.tick()
			}
			if throttledSenders == 0 {
				t.Fatal("the senders' flood was never throttled: the model plays no limit")
			}
			if lost != 0 {
				t.Errorf("%d unsubscribes throttled while the senders were: want none", lost)
			}
			// The other way round: a flood of unsubscribes, then one
			// sender's call.
			g = &gateway{throttles: stageThrottles(d), shared: shared, tokens: map[string]float64{}}
			for i := 0; i < 10000; i++ {
				g.request(unsub, "/~1unsubscribe", "POST")
				g.request(senders, "/~1unsubscribe", "POST")
			}
			if !g.request(senders, "/~1campaigns", "POST") {
				t.Error("a flood of unsubscribes throttled a sender's create")
			}
		})
	}
}
