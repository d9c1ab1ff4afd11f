package test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/notifications"
	"github.com/unschedule/unschedule/constructs/userauth"
)

// TestShardsForAMillionUsersSynthesize: at the default 200 filter
// policies per topic, 1,000,000 users need 5,000 topics. They synthesize,
// spread over nested stacks that each stay under CloudFormation's 500
// resources, and the functions still find every topic from two short
// environment variables.
func TestShardsForAMillionUsersSynthesize(t *testing.T) {
	if testing.Short() {
		t.Skip("synthesizes 5,000 topics")
	}
	const users, perTopic = 1_000_000, 200
	shards := users / perTopic
	Check(t, func() {
		app := NewApp(t, nil)
		stack := awscdk.NewStack(app, jsii.String("Scale"), nil)
		auth := userauth.NewUserAuth(stack, jsii.String("Auth"), nil)
		n := notifications.NewUserNotifications(stack, jsii.String("Notifications"), &notifications.UserNotificationsProps{
			UserPool: auth.UserPool, Shards: shards, TopicNamePrefix: "scale-notify",
		})
		n.StoreSettingsIn(awsdynamodb.NewTable(stack, jsii.String("Settings"), &awsdynamodb.TableProps{
			PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("userId"), Type: awsdynamodb.AttributeType_STRING},
			SortKey:      &awsdynamodb.Attribute{Name: jsii.String("taskId"), Type: awsdynamodb.AttributeType_STRING},
		}))
		if len(n.Topics) != shards {
			t.Fatalf("%d topics, want %d", len(n.Topics), shards)
		}
		byStack := map[string]awscdk.Stack{}
		for _, topic := range n.Topics {
			st := awscdk.Stack_Of(topic)
			byStack[*st.Node().Path()] = st
		}
		total := 0
		for path, st := range byStack {
			if !*st.Nested() {
				t.Fatalf("topic in top-level stack %s", path)
			}
			res := (*assertions.Template_FromStack(st, nil).ToJSON())["Resources"].(map[string]any)
			if len(res) > 500 {
				t.Fatalf("nested stack %s has %d resources, over 500", path, len(res))
			}
			for _, r := range res {
				if r.(map[string]any)["Type"] == "AWS::SNS::Topic" {
					total++
				}
			}
		}
		if want := shards / notifications.TopicsPerNestedStack; total != shards || len(byStack) != want {
			t.Fatalf("%d topics in %d nested stacks, want %d in %d", total, len(byStack), shards, want)
		}
		env := n.Environment()
		if env["TOPIC_SHARDS"] != fmt.Sprint(shards) || !strings.Contains(env["TOPIC_ARN_PREFIX"], ":scale-notify-") {
			t.Fatalf("environment %v", env)
		}
	})
}

// Without StoreSettingsIn the trigger would fail at its first cold start
// (no TABLE_NAME): the construct refuses to synthesize.
func TestNotificationSettingsNeedATable(t *testing.T) {
	Check(t, func() {
		app := NewApp(t, nil)
		stack := awscdk.NewStack(app, jsii.String("NoSettings"), nil)
		auth := userauth.NewUserAuth(stack, jsii.String("Auth"), nil)
		n := notifications.NewUserNotifications(stack, jsii.String("Notifications"), &notifications.UserNotificationsProps{UserPool: auth.UserPool})
		errs := *n.Node().Validate()
		if len(errs) != 1 || !strings.Contains(*errs[0], "StoreSettingsIn") {
			t.Fatalf("validation errors %v, want one naming StoreSettingsIn", errs)
		}
	})
}
