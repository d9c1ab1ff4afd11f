package test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// cfnLintIgnored are the cfn-lint rules `make test` does not enforce, each
// with why.
var cfnLintIgnored = map[string]string{
	// "dependency already enforced by a Ref/GetAtt": CDK writes an
	// explicit DependsOn on a function's role (and on the web bucket and
	// branch) beside the GetAtt; redundant, harmless, and not ours to
	// remove.
	"W3005": "CDK's own redundant DependsOn",
}

// cfnLint finds a usable cfn-lint: on PATH, or pyenv's shim (a CI shell may
// not have pyenv's shims on PATH). Without one the test skips, except
// under CI=true, where it fails.
func cfnLint(t *testing.T) string {
	t.Helper()
	candidates := []string{"cfn-lint"}
	if root := os.Getenv("PYENV_ROOT"); root != "" {
		candidates = append(candidates, filepath.Join(root, "shims", "cfn-lint"))
	}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".pyenv", "shims", "cfn-lint"))
	}
	for _, c := range candidates {
		bin, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		if out, err := exec.Command(bin, "--version").CombinedOutput(); err == nil {
			t.Logf("%s: %s", bin, strings.TrimSpace(string(out)))
			return bin
		}
	}
	msg := "cfn-lint is not installed: install it (pip install cfn-lint) to lint the synthesized templates"
	if os.Getenv("CI") == "true" {
		t.Fatal("FAILED: " + msg + " (CI=true: the lint is required)")
	}
	t.Skip("SKIPPED: " + msg)
	return ""
}

// TestTemplatesPassCfnLint runs cfn-lint (CloudFormation's resource
// schemas and rules) on every template of both environments, nested stacks
// included, and fails on any error or warning but the ignored rules.
func TestTemplatesPassCfnLint(t *testing.T) {
	bin := cfnLint(t)
	var ignore []string
	for id := range cfnLintIgnored {
		ignore = append(ignore, id)
	}
	sort.Strings(ignore)
	t.Run("a schema error fails", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.template.json")
		tpl := `{"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"MessageRetentionPeriod": "two weeks"}}}}`
		if err := os.WriteFile(bad, []byte(tpl), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "--format", "parseable", "--", bad).CombinedOutput(); err == nil {
			t.Fatalf("cfn-lint passed a template with a string retention period:\n%s", out)
		}
	})
	for _, env := range []string{"dev", "prod"} {
		t.Run(env, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			for name, tpl := range Stack(t, env).Templates() {
				b, err := json.MarshalIndent(tpl, "", " ")
				if err != nil {
					t.Fatal(err)
				}
				f := filepath.Join(dir, strings.NewReplacer("/", "_").Replace(strings.TrimPrefix(name, "/"))+".template.json")
				if err := os.WriteFile(f, b, 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
			}
			sort.Strings(files)
			if len(files) < 2 {
				t.Fatalf("want the stack and its nested notification stack, got %v", files)
			}
			args := append([]string{"--format", "parseable", "--ignore-checks", strings.Join(ignore, ","), "--"}, files...)
			out, err := exec.Command(bin, args...).CombinedOutput()
			if err != nil {
				t.Fatalf("cfn-lint on %d templates: %v\n%s", len(files), err, out)
			}
			t.Logf("cfn-lint: %d templates clean (ignoring %v)", len(files), ignore)
		})
	}
}
