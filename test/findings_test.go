package test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/internal/tooling/smoke"
)

// snsActionsWithoutResourceType are the SNS actions the stack grants on
// "*": the Service Authorization Reference lists no resource type for
// them, so no ARN can scope them
// (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazonsns.html).
// Every other SNS action names its topics.
var snsActionsWithoutResourceType = []string{"sns:GetSubscriptionAttributes", "sns:Unsubscribe"}

// TestSNSGrantsOnStarOnlyWithoutResourceType scans every IAM policy of both
// environments, nested stacks included.
func TestSNSGrantsOnStarOnlyWithoutResourceType(t *testing.T) {
	for _, env := range []string{"dev", "prod"} {
		t.Run(env, func(t *testing.T) {
			onStar := map[string]bool{}
			for name, tpl := range Stack(t, env).Templates() {
				for id, r := range tpl["Resources"].(map[string]any) {
					res := r.(map[string]any)
					if res["Type"] != "AWS::IAM::Policy" {
						continue
					}
					for _, x := range asList(Props(res)["PolicyDocument"].(map[string]any)["Statement"]) {
						st := x.(map[string]any)
						if st["Resource"] != "*" && !slices.Contains(asList(st["Resource"]), any("*")) {
							continue
						}
						for _, a := range Actions(st) {
							if !strings.HasPrefix(a, "sns:") {
								continue
							}
							onStar[a] = true
							if !slices.Contains(snsActionsWithoutResourceType, a) {
								t.Errorf("%s/%s grants %s on *: scope it to its topics", name, id, a)
							}
						}
					}
				}
			}
			if len(onStar) != len(snsActionsWithoutResourceType) {
				t.Errorf("SNS actions on *: %v, want exactly %v (is the subscription grant still there?)", onStar, snsActionsWithoutResourceType)
			}
		})
	}
}

// TestSmokeReadsRetentionAsTheApp: the smoke test's reading of cdk.json
// (which environments it refuses without -allow-retained) agrees with the
// app's own config for every environment.
func TestSmokeReadsRetentionAsTheApp(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "cdk.json"))
	if err != nil {
		t.Fatal(err)
	}
	envs := cdkContext(t)["environments"].(map[string]any)
	if _, ok := envs["prod"]; !ok {
		t.Fatal("cdk.json has no prod environment")
	}
	for name := range envs {
		t.Run(name, func(t *testing.T) {
			got, err := smoke.Retained(b, name)
			if want := EnvConfig(t, name).Protected(); err != nil || got != want {
				t.Fatalf("smoke reads retained=%v (%v), the app %v", got, err, want)
			}
		})
	}
}
