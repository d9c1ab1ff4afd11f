package testenv

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// CfnLint runs cfn-lint (CloudFormation's resource schemas and rules) on
// one synthesized template, failing on any error or warning but W3005
// (CDK's own redundant DependsOn beside a Ref or GetAtt). Without
// cfn-lint it skips, or fails under CI=true.
func CfnLint(t testing.TB, template any) {
	t.Helper()
	var bin string
	cands := []string{"cfn-lint"}
	if root := os.Getenv("PYENV_ROOT"); root != "" {
		cands = append(cands, filepath.Join(root, "shims", "cfn-lint"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		cands = append(cands, filepath.Join(home, ".pyenv", "shims", "cfn-lint"))
	}
	for _, c := range cands {
		if p, err := exec.LookPath(c); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("cfn-lint is not installed (CI=true: the lint is required)")
		}
		t.Skip("cfn-lint is not installed: pip install cfn-lint")
	}
	f := filepath.Join(t.TempDir(), "template.json")
	b, err := json.Marshal(template)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--format", "parseable", "--ignore-checks", "W3005", "--", f).CombinedOutput()
	if err != nil {
		t.Fatalf("cfn-lint: %v\n%s", err, out)
	}
}
