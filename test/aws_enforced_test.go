package test

// What only AWS enforces, pinned at synth: IAM trust conditions, the key
// and topic policies CloudWatch needs to deliver alarms, and the
// asynchronous-invocation settings of every function a service invokes
// asynchronously. Each test names the AWS documentation it follows.

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/todoapp"
)

// Templates returns the stack's template and those of its nested stacks
// (the notification topics), as CloudFormation gets them.
func (s *synthed) Templates() map[string]map[string]any {
	out := map[string]map[string]any{*s.stack.StackName(): s.json}
	for path, tpl := range s.nested {
		out[path] = tpl
	}
	return out
}

// TestSchedulerRoleTrustsItsScheduleGroup: EventBridge Scheduler assumes
// the execution role with aws:SourceArn = the schedule GROUP's ARN, so a
// condition on schedule ARNs would refuse every invocation.
// https://docs.aws.amazon.com/scheduler/latest/UserGuide/cross-service-confused-deputy-prevention.html
func TestSchedulerRoleTrustsItsScheduleGroup(t *testing.T) {
	s := Stack(t, "dev")
	groups := s.Resources("AWS::Scheduler::ScheduleGroup")
	if len(groups) != 1 {
		t.Fatalf("want one schedule group, found %d", len(groups))
	}
	var name string
	for _, g := range groups {
		name, _ = Props(g)["Name"].(string)
	}
	if name == "" {
		t.Fatal("the schedule group has no literal Name")
	}
	role := s.Resources("AWS::IAM::Role")[s.LogicalID(t, "AWS::IAM::Role", "TasksSchedulerRole")]
	sts := asList(Props(role)["AssumeRolePolicyDocument"].(map[string]any)["Statement"])
	if len(sts) != 1 {
		t.Fatalf("want one trust statement, got %s", JSON(sts))
	}
	st := sts[0].(map[string]any)
	cond := st["Condition"].(map[string]any)
	got := map[string]string{}
	for op, kv := range cond {
		for k, v := range kv.(map[string]any) {
			got[op+" "+k] = cfnText(v)
		}
	}
	want := map[string]string{
		"StringEquals aws:SourceAccount": "${AWS::AccountId}",
		"StringEquals aws:SourceArn":     "arn:${AWS::Partition}:scheduler:${AWS::Region}:${AWS::AccountId}:schedule-group/" + name,
	}
	if JSON(got) != JSON(want) || JSON(st["Principal"]) != JSON(map[string]any{"Service": "scheduler.amazonaws.com"}) || st["Action"] != "sts:AssumeRole" {
		t.Fatalf("scheduler role trust:\n got %s %s\nwant %s", JSON(st["Principal"]), JSON(got), JSON(want))
	}
}

// trustWithoutSource lists the service principals that may assume a role
// without aws:SourceArn/aws:SourceAccount, and why. Every other service
// principal must carry both.
var trustWithoutSource = map[string]string{
	// Lambda's documented execution-role trust policy names only the
	// service; a role reaches a function only through iam:PassRole in
	// this account (CreateFunction/UpdateFunctionConfiguration).
	// https://docs.aws.amazon.com/lambda/latest/dg/lambda-intro-execution-role.html
	"lambda.amazonaws.com": "execution role, attached through iam:PassRole",
	// The account-wide API Gateway logging role (AWS::ApiGateway::Account):
	// AWS's own template names only the service, and it may only write
	// logs. https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/aws-resource-apigateway-account.html
	"apigateway.amazonaws.com": "account-level CloudWatch Logs role of API Gateway",
}

// TestEveryTrustPolicyIsScoped reviews every role of both environments,
// nested stacks included: no account or wildcard principal, and every
// service principal but the justified ones names its source account and
// resource.
func TestEveryTrustPolicyIsScoped(t *testing.T) {
	for _, env := range []string{"dev", "prod"} {
		t.Run(env, func(t *testing.T) {
			s := Stack(t, env)
			roles := 0
			for name, tpl := range s.Templates() {
				for id, r := range tpl["Resources"].(map[string]any) {
					res := r.(map[string]any)
					if res["Type"] != "AWS::IAM::Role" {
						continue
					}
					roles++
					doc := Props(res)["AssumeRolePolicyDocument"].(map[string]any)
					for _, x := range asList(doc["Statement"]) {
						st := x.(map[string]any)
						p, _ := st["Principal"].(map[string]any)
						svc, _ := p["Service"].(string)
						if len(p) != 1 || svc == "" {
							t.Errorf("%s/%s: principal %s: want exactly one service principal", name, id, JSON(st["Principal"]))
							continue
						}
						if _, ok := trustWithoutSource[svc]; ok {
							continue
						}
						c := JSON(st["Condition"])
						if !strings.Contains(c, `"aws:SourceAccount"`) || !strings.Contains(c, `"aws:SourceArn"`) {
							t.Errorf("%s/%s: %s may assume the role without aws:SourceAccount and aws:SourceArn: %s", name, id, svc, c)
						}
					}
				}
			}
			if roles < 5 {
				t.Fatalf("found %d roles", roles)
			}
		})
	}
}

// TestAlarmTopicReachesCloudWatch: CloudWatch can publish to an encrypted
// topic only when the key is customer-managed and its policy lets
// cloudwatch.amazonaws.com use it, and the topic policy lets it publish;
// the key policy lets it use the key for the alarm topic only (the
// encryption context SNS passes to KMS names the topic).
// https://docs.aws.amazon.com/sns/latest/dg/sns-key-management.html#compatibility-with-aws-services
func TestAlarmTopicReachesCloudWatch(t *testing.T) {
	for _, env := range []string{"dev", "prod"} {
		t.Run(env, func(t *testing.T) {
			s := Stack(t, env)
			keyID := s.LogicalID(t, "AWS::KMS::Key", "AlarmTopicKey")
			topicID := s.LogicalID(t, "AWS::SNS::Topic", "AlarmTopic")
			key := Props(s.Resources("AWS::KMS::Key")[keyID])
			if key["EnableKeyRotation"] != true {
				t.Errorf("alarm topic key rotation: %v", key["EnableKeyRotation"])
			}
			if got := JSON(Props(s.Resources("AWS::SNS::Topic")[topicID])["KmsMasterKeyId"]); got != JSON(getAtt(keyID, "Arn")) {
				t.Errorf("alarm topic key %s, want the customer-managed key %s", got, keyID)
			}
			// The key serves this topic only: SNS's encryption context
			// names the topic, whose name is fixed so the key can name it.
			name := "Unschedule-" + env + "-alarms"
			if got := Props(s.Resources("AWS::SNS::Topic")[topicID])["TopicName"]; got != name {
				t.Errorf("alarm topic name %v, want %s", got, name)
			}
			topicArn := map[string]any{"Fn::Join": []any{"", []any{
				"arn:", ref("AWS::Partition"), ":sns:", ref("AWS::Region"), ":", ref("AWS::AccountId"), ":" + name}}}
			wantKey := map[string]any{
				"Sid": "CloudWatchAlarmsPublishToTheAlarmTopic", "Effect": "Allow",
				"Principal": map[string]any{"Service": "cloudwatch.amazonaws.com"},
				"Action":    []any{"kms:Decrypt", "kms:GenerateDataKey*"}, "Resource": "*",
				"Condition": map[string]any{"StringEquals": map[string]any{
					"aws:SourceAccount": ref("AWS::AccountId"), "kms:EncryptionContext:aws:sns:topicArn": topicArn}},
			}
			if !hasStatement(key["KeyPolicy"], wantKey) {
				t.Errorf("key policy lacks %s:\n%s", JSON(wantKey), JSON(key["KeyPolicy"]))
			}
			var topicPolicy any
			for _, p := range s.Resources("AWS::SNS::TopicPolicy") {
				if JSON(Props(p)["Topics"]) == JSON([]any{ref(topicID)}) {
					topicPolicy = Props(p)["PolicyDocument"]
				}
			}
			wantTopic := map[string]any{
				"Sid": "CloudWatchAlarmsPublish", "Effect": "Allow",
				"Principal": map[string]any{"Service": "cloudwatch.amazonaws.com"},
				"Action":    "sns:Publish", "Resource": ref(topicID),
				"Condition": map[string]any{
					"StringEquals": map[string]any{"aws:SourceAccount": ref("AWS::AccountId")},
					"ArnLike": map[string]any{"aws:SourceArn": map[string]any{"Fn::Join": []any{"", []any{
						"arn:", ref("AWS::Partition"), ":cloudwatch:", ref("AWS::Region"), ":", ref("AWS::AccountId"), ":alarm:*",
					}}}},
				},
			}
			if !hasStatement(topicPolicy, wantTopic) {
				t.Errorf("alarm topic policy lacks %s:\n%s", JSON(wantTopic), JSON(topicPolicy))
			}
		})
	}
}

func hasStatement(doc any, want map[string]any) bool {
	d, _ := doc.(map[string]any)
	for _, st := range asList(d["Statement"]) {
		if JSON(st) == JSON(want) {
			return true
		}
	}
	return false
}

// TestAlarmRecipientWarning: an environment other than dev with no
// alarmEmail synthesizes, with a warning that names the cdk.json key; one
// with an alarmEmail, or dev, has no such warning.
func TestAlarmRecipientWarning(t *testing.T) {
	recipient := func(warnings []string) []string {
		var out []string
		for _, w := range warnings {
			if strings.Contains(w, todoapp.NoAlarmRecipientWarning) {
				out = append(out, w)
			}
		}
		return out
	}
	prod := recipient(Stack(t, "prod").warnings)
	if len(prod) != 1 || !strings.Contains(prod[0], `"alarmEmail"`) || !strings.HasPrefix(prod[0], "/Unschedule-prod/AlarmTopic:") {
		t.Errorf("prod without alarmEmail: want one warning on the alarm topic naming \"alarmEmail\", got %v", prod)
	}
	if dev := recipient(Stack(t, "dev").warnings); len(dev) != 0 {
		t.Errorf("dev: want no alarm-recipient warning, got %v", dev)
	}
	cfg := EnvConfig(t, "prod")
	cfg.AlarmEmail = "ops@example.com"
	var withEmail *synthed
	Check(t, func() {
		app := NewApp(t, map[string]any{"aws:cdk:bundling-stacks": []string{}})
		st := todoapp.NewTodoStack(app, "Unschedule-prod", &todoapp.TodoStackProps{Config: cfg, WebPlaceholderIfMissing: true})
		withEmail = synthOf(t, st.Stack)
		for _, m := range *assertions.Annotations_FromStack(st.Stack).FindWarning(jsii.String("*"), assertions.Match_AnyValue()) {
			//lint:ignore SA1019 Annotations returns this type; the Go binding has no other
			withEmail.warnings = append(withEmail.warnings, fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data))
		}
	})
	if got := recipient(withEmail.warnings); len(got) != 0 {
		t.Errorf("prod with alarmEmail: want no warning, got %v", got)
	}
	Check(t, func() {
		withEmail.tpl.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), map[string]any{
			"Protocol": "email", "Endpoint": "ops@example.com",
			"TopicArn": ref(withEmail.LogicalID(t, "AWS::SNS::Topic", "AlarmTopic")),
		})
	})
}

// asyncInvoked lists the functions an AWS service invokes asynchronously:
// those EventBridge rules, SNS or S3 may invoke (their resource policy),
// and those the EventBridge Scheduler role may invoke.
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-async.html
// https://docs.aws.amazon.com/lambda/latest/dg/with-eventbridge-scheduler.html
func (s *synthed) asyncInvoked(t *testing.T) []string {
	t.Helper()
	set := map[string]bool{}
	for _, p := range s.Resources("AWS::Lambda::Permission") {
		pp := Props(p)
		switch pp["Principal"] {
		case "events.amazonaws.com", "sns.amazonaws.com", "s3.amazonaws.com", "scheduler.amazonaws.com":
			set[cfnText(pp["FunctionName"])] = true
		}
	}
	for id, r := range s.Resources("AWS::IAM::Role") {
		if !strings.Contains(JSON(Props(r)["AssumeRolePolicyDocument"]), "scheduler.amazonaws.com") {
			continue
		}
		for _, st := range s.RoleStatements(id) {
			for _, a := range Actions(st) {
				if a == "lambda:InvokeFunction" {
					for _, r := range resources(st) {
						set[r] = true
					}
				}
			}
		}
	}
	var out []string
	for fn := range set {
		out = append(out, fn)
	}
	sort.Strings(out)
	return out
}

// TestAsyncInvokedFunctionsKeepTheirFailures: without an EventInvokeConfig
// Lambda retries a failed asynchronous event twice and drops it. Every
// asynchronously invoked function has explicit settings, an encrypted,
// TLS-only on-failure queue that keeps records 14 days and that the
// function may send to, and alarms on that queue, on AsyncEventsDropped and
// on DestinationDeliveryFailures, all notifying the alarm topic.
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html
// https://docs.aws.amazon.com/lambda/latest/dg/monitoring-metrics-types.html
func TestAsyncInvokedFunctionsKeepTheirFailures(t *testing.T) {
	s := Stack(t, "dev")
	expiry := s.LogicalID(t, "AWS::Lambda::Function", "TasksFire")
	reconciler := s.LogicalID(t, "AWS::Lambda::Function", "TasksReconcilerFunction")
	want := map[string]struct {
		maxAge, retries float64
		queuePrefix     string
	}{
		"${" + expiry + ".Arn}":     {21600, 2, "TasksExpiryFailureQueue"},
		"${" + reconciler + ".Arn}": {1800, 0, "TasksReconcilerFailureQueue"},
	}
	got := s.asyncInvoked(t)
	var wantNames []string
	for k := range want {
		wantNames = append(wantNames, k)
	}
	sort.Strings(wantNames)
	if JSON(got) != JSON(wantNames) {
		t.Fatalf("asynchronously invoked functions %v, want %v: give a new one asyncinvoke.Configure and list it here", got, wantNames)
	}
	topic := s.LogicalID(t, "AWS::SNS::Topic", "AlarmTopic")
	for fnRef, w := range want {
		fn := expiry
		if strings.Contains(fnRef, reconciler) {
			fn = reconciler
		}
		t.Run(fn, func(t *testing.T) {
			queue := s.LogicalID(t, "AWS::SQS::Queue", w.queuePrefix)
			var cfgs []map[string]any
			for _, c := range s.Resources("AWS::Lambda::EventInvokeConfig") {
				if JSON(Props(c)["FunctionName"]) == JSON(ref(fn)) {
					cfgs = append(cfgs, Props(c))
				}
			}
			wantCfg := map[string]any{
				"FunctionName": ref(fn), "Qualifier": "$LATEST",
				"MaximumEventAgeInSeconds": w.maxAge, "MaximumRetryAttempts": w.retries,
				"DestinationConfig": map[string]any{"OnFailure": map[string]any{"Destination": getAtt(queue, "Arn")}},
			}
			if len(cfgs) != 1 || JSON(cfgs[0]) != JSON(wantCfg) {
				t.Fatalf("event invoke config\n got %s\nwant %s", JSON(cfgs), JSON(wantCfg))
			}
			q := Props(s.Resources("AWS::SQS::Queue")[queue])
			if q["SqsManagedSseEnabled"] != true || q["MessageRetentionPeriod"] != 1209600.0 || q["FifoQueue"] != nil {
				t.Errorf("failure queue %s", JSON(q))
			}
			tlsOnly := false
			for _, p := range s.Resources("AWS::SQS::QueuePolicy") {
				pp := Props(p)
				if JSON(pp["Queues"]) == JSON([]any{ref(queue)}) && strings.Contains(JSON(pp["PolicyDocument"]), `"aws:SecureTransport": "false"`) {
					tlsOnly = true
				}
			}
			if !tlsOnly {
				t.Errorf("failure queue %s does not refuse non-TLS requests", queue)
			}
			if got, want := ActionMap(s.FunctionStatements(t, fn))["sqs:SendMessage"], `{"Fn::GetAtt":["`+queue+`","Arn"]}`; got != want {
				t.Errorf("sqs:SendMessage on %s, want the failure queue only (%s)", got, want)
			}
			alarmed := map[string]bool{}
			for _, a := range s.Resources("AWS::CloudWatch::Alarm") {
				p := Props(a)
				if !strings.Contains(JSON(p["AlarmActions"]), `"Ref": "`+topic+`"`) || p["Threshold"] != 1.0 {
					continue
				}
				dims := JSON(p["Dimensions"])
				switch {
				case p["Namespace"] == "AWS/Lambda" && dims == JSON([]any{map[string]any{"Name": "FunctionName", "Value": ref(fn)}}):
					alarmed[p["MetricName"].(string)] = true
				case p["Namespace"] == "AWS/SQS" && dims == JSON([]any{map[string]any{"Name": "QueueName", "Value": getAtt(queue, "QueueName")}}):
					alarmed[p["MetricName"].(string)] = true
				}
			}
			for _, m := range []string{"AsyncEventsDropped", "DestinationDeliveryFailures", "ApproximateNumberOfMessagesVisible"} {
				if !alarmed[m] {
					t.Errorf("no alarm on %s (alarmed: %v)", m, alarmed)
				}
			}
		})
	}
}

// TestExpiryAsyncPropsAndValidation: the expiry function's asynchronous
// settings are props of the scheduler timer (zero retries can be asked
// for), checked against Lambda's limits.
func TestExpiryAsyncPropsAndValidation(t *testing.T) {
	stack := customStack(t, "Expiry")
	scheduleonwrite.NewScheduleOnWrite(stack, jsii.String("Custom"), &scheduleonwrite.ScheduleOnWriteProps{
		Target: importedTarget(stack, "Target"), NoReconciler: true, // the expiry function's config only
		Timer: scheduleonwrite.NewSchedulerTimer(&scheduleonwrite.SchedulerTimerProps{
			FireMaxEventAge: awscdk.Duration_Hours(jsii.Number(1)), FireRetryAttempts: jsii.Number(0)}),
	})
	s := synthOf(t, stack)
	cfgs := s.Resources("AWS::Lambda::EventInvokeConfig")
	for _, c := range cfgs {
		if p := Props(c); p["MaximumEventAgeInSeconds"] != 3600.0 || p["MaximumRetryAttempts"] != 0.0 {
			t.Errorf("event invoke config %s, want 3600 s and no retries", JSON(p))
		}
	}
	if len(cfgs) != 1 {
		t.Fatalf("%d event invoke configs", len(cfgs))
	}
	for i, tc := range []struct {
		name  string
		props scheduleonwrite.SchedulerTimerProps
		want  string
	}{
		{"three retries", scheduleonwrite.SchedulerTimerProps{FireRetryAttempts: jsii.Number(3)},
			"FireRetryAttempts must be a whole number between 0 and 2 inclusive (given 3)"},
		{"event age above six hours", scheduleonwrite.SchedulerTimerProps{FireMaxEventAge: awscdk.Duration_Seconds(jsii.Number(21601))},
			"FireMaxEventAge must be a whole number between 60 and 21600 inclusive (given 21601)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := panicText(func() {
				scheduleonwrite.NewScheduleOnWrite(stack, jsii.String(fmt.Sprint("Bad", i)), &scheduleonwrite.ScheduleOnWriteProps{
					Target: importedTarget(stack, fmt.Sprint("BadTarget", i)), Timer: scheduleonwrite.NewSchedulerTimer(&tc.props)})
			})
			if !strings.Contains(got, tc.want) {
				t.Errorf("panic %q lacks %q", got, tc.want)
			}
		})
	}
}
