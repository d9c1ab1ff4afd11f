package test

import (
	"fmt"
	"sort"
	"strings"
	"testing"
)

// TestNoUnsuppressedNagFindings applies the AwsSolutions pack as app.go
// does and fails on any error or warning that is not suppressed with a
// reason, in both environments.
func TestNoUnsuppressedNagFindings(t *testing.T) {
	for _, env := range []string{"dev", "prod"} {
		t.Run(env, func(t *testing.T) {
			// The shared stack: synthesized with the checks app.go applies.
			s := Stack(t, env)
			findings := append([]string(nil), s.nag...)
			Check(t, func() {
				// Suppressions are per resource, each with a real reason.
				if md, ok := s.json["Metadata"].(map[string]any); ok {
					if _, ok := md["cdk_nag"]; ok {
						findings = append(findings, "stack-wide cdk-nag suppression: suppress on the resource instead")
					}
				}
				for id, r := range s.json["Resources"].(map[string]any) {
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
