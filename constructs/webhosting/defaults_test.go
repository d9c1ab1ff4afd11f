package webhosting

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/internal/testenv"
)

func TestEnvName(t *testing.T) {
	for key, want := range map[string]string{
		"apiUrl":           "VITE_API_URL",
		"region":           "VITE_REGION",
		"userPoolId":       "VITE_USER_POOL_ID",
		"userPoolClientId": "VITE_USER_POOL_CLIENT_ID",
		"mode":             "VITE_MODE",
	} {
		t.Run(key, func(t *testing.T) {
			if got := EnvName(key); got != want {
				t.Fatalf("EnvName(%q) = %q, want %q", key, got, want)
			}
		})
	}
}

// TestBuildSpecScalarsAreJSONStrings checks the property the build spec
// relies on: every scalar is a JSON string, which YAML reads as the same
// double-quoted string, so the Node command needs no hand escaping.
func TestBuildSpecScalarsAreJSONStrings(t *testing.T) {
	spec := BuildSpec("web", []string{"apiUrl", "mode"})
	for _, want := range []string{"version: 1\napplications:\n", `  - appRoot: "web"`, `baseDirectory: "dist"`, `- "npm ci"`, `- "npm run build"`} {
		if !strings.Contains(spec, want) {
			t.Errorf("build spec lacks %q:\n%s", want, spec)
		}
	}
	scalars := 0
	for _, line := range strings.Split(strings.TrimSpace(spec), "\n") {
		item := strings.TrimSpace(line)
		isListItem := strings.HasPrefix(item, "- ")
		item = strings.TrimPrefix(item, "- ")
		value := item
		if k, v, ok := strings.Cut(item, ": "); ok && !strings.HasPrefix(k, `"`) {
			value = v
		} else if !isListItem {
			continue // a mapping key that opens a block
		}
		if value == "1" { // version
			continue
		}
		var s string
		if err := json.Unmarshal([]byte(value), &s); err != nil {
			t.Errorf("line %q: value %s is not a JSON string: %v", line, value, err)
		}
		scalars++
	}
	if scalars != 7 {
		t.Fatalf("checked %d scalars, want 7 (appRoot, 3 commands, baseDirectory, files, cache):\n%s", scalars, spec)
	}
}

// TestConfigScriptWritesConfigJSON runs the build spec's Node command the
// way the Amplify build does (in the app root, after npm run build).
func TestConfigScriptWritesConfigJSON(t *testing.T) {
	node := testenv.NodeBin(t)
	script := configScript([]string{"apiUrl", "mode", "region", "userPoolClientId", "userPoolId"})
	full := map[string]string{
		"VITE_API_URL": "https://abc.execute-api.eu-west-1.amazonaws.com/api/", "VITE_MODE": "cognito",
		"VITE_REGION": "eu-west-1", "VITE_USER_POOL_ID": `eu-west-1_a"b`, "VITE_USER_POOL_CLIENT_ID": "client",
	}
	for _, tc := range []struct {
		name    string
		unset   string
		wantErr string
	}{
		{name: "all set"},
		{name: "empty variable fails the build", unset: "VITE_USER_POOL_ID", wantErr: "config.json: userPoolId is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "dist"), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", strings.Replace(script, "node ", node+" ", 1))
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			for k, v := range full {
				if k != tc.unset {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
			}
			out, err := cmd.CombinedOutput()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(string(out), tc.wantErr) {
					t.Fatalf("want failure with %q, got err=%v output=%s", tc.wantErr, err, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			b, err := os.ReadFile(filepath.Join(dir, "dist", ConfigFile))
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]string
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("config.json is not JSON: %v: %s", err, b)
			}
			want := map[string]string{
				"apiUrl": full["VITE_API_URL"], "mode": "cognito", "region": "eu-west-1",
				"userPoolId": `eu-west-1_a"b`, "userPoolClientId": "client",
			}
			if len(got) != len(want) {
				t.Fatalf("config.json = %v, want %v", got, want)
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("config.json %s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
}
