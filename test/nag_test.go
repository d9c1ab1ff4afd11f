package test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"

	"github.com/unschedule/unschedule/todoapp"
)

// TestNoUnsuppressedNagFindings applies the AwsSolutions pack as app.go
// does and fails on any error or warning that is not suppressed with a
// reason, in both environments.
func TestNoUnsuppressedNagFindings(t *testing.T) {
	for _, env := range []string{"dev", "prod"} {
		t.Run(env, func(t *testing.T) {
			var findings []string
			Check(t, func() {
				app := NewApp(t, nil)
				st := todoapp.NewTodoStack(app, "Unschedule-"+env, &todoapp.TodoStackProps{Config: EnvConfig(t, env), WebPlaceholderIfMissing: true})
				todoapp.AddChecks(app) // exactly what app.go applies
				findings = append(findings, NagFindings(st.Stack)...)
				// Suppressions are per resource, each with a real reason.
				if md, ok := (*assertions.Template_FromStack(st.Stack, nil).ToJSON())["Metadata"].(map[string]any); ok {
					if _, ok := md["cdk_nag"]; ok {
						findings = append(findings, "stack-wide cdk-nag suppression: suppress on the resource instead")
					}
				}
				for id, r := range (*assertions.Template_FromStack(st.Stack, nil).ToJSON())["Resources"].(map[string]any) {
					md, _ := r.(map[string]any)["Metadata"].(map[string]any)
					nagMD, _ := md["cdk_nag"].(map[string]any)
					rules, _ := nagMD["rules_to_suppress"].([]any)
					for _, x := range rules {
						if reason, _ := x.(map[string]any)["reason"].(string); len(reason) < 30 {
							findings = append(findings, fmt.Sprintf("suppression on %s without a real reason: %v", id, x))
						}
					}
				}
			})
			sort.Strings(findings)
			if len(findings) > 0 {
				t.Fatalf("%d unsuppressed cdk-nag findings:\n%s", len(findings), strings.Join(findings, "\n"))
			}
		})
	}
}
