package webhosting

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/internal/todo/webheaders"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
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

func TestCustomHeadersYAML(t *testing.T) {
	headers := []webheaders.Header{{Name: "Content-Security-Policy", Value: "default-src 'self'; connect-src 'self' https://${Token[TOKEN.1]}.example"}, {Name: "X-Content-Type-Options", Value: "nosniff"}}
	cases := []struct {
		name, appRoot, want string
	}{
		{name: "a deployed build", want: `customHeaders:
  - pattern: "**/*"
    headers:
      - key: "Content-Security-Policy"
        value: "default-src 'self'; connect-src 'self' https://${Token[TOKEN.1]}.example"
      - key: "X-Content-Type-Options"
        value: "nosniff"
`},
		{name: "a monorepo app names its root", appRoot: "web", want: `applications:
  - appRoot: "web"
    customHeaders:
      - pattern: "**/*"
        headers:
          - key: "Content-Security-Policy"
            value: "default-src 'self'; connect-src 'self' https://${Token[TOKEN.1]}.example"
          - key: "X-Content-Type-Options"
            value: "nosniff"
`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := customHeaders(c.appRoot, headers); got != c.want {
				t.Fatalf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

func TestURLOriginAndHost(t *testing.T) {
	cases := []struct {
		in, origin string
		ok         bool
		host       string
	}{
		{in: "https://abc.execute-api.eu-west-1.amazonaws.com/prod/", origin: "https://abc.execute-api.eu-west-1.amazonaws.com", ok: true, host: "abc.execute-api.eu-west-1.amazonaws.com"},
		{in: "https://${Token[TOKEN.12]}.execute-api.${Token[AWS.Region.3]}.${Token[AWS.URLSuffix.4]}/${Token[TOKEN.13]}/",
			origin: "https://${Token[TOKEN.12]}.execute-api.${Token[AWS.Region.3]}.${Token[AWS.URLSuffix.4]}", ok: true,
			host: "${Token[TOKEN.12]}.execute-api.${Token[AWS.Region.3]}.${Token[AWS.URLSuffix.4]}"},
		{in: "https://api.example.com", origin: "https://api.example.com", ok: true, host: "api.example.com"},
		{in: "x.appsync-api.eu-west-1.amazonaws.com", origin: "", ok: false, host: "x.appsync-api.eu-west-1.amazonaws.com"},
		{in: "", origin: "", ok: false, host: ""},
		{in: "/api/", origin: "", ok: false, host: ""},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if o, ok := urlOrigin(c.in); o != c.origin || ok != c.ok {
				t.Errorf("urlOrigin(%q) = %q, %v; want %q, %v", c.in, o, ok, c.origin, c.ok)
			}
			if h := hostOf(c.in); h != c.host {
				t.Errorf("hostOf(%q) = %q, want %q", c.in, h, c.host)
			}
		})
	}
}
