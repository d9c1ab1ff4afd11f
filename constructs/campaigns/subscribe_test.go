package campaigns

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// TestSubscribeHandlerAllowsOnlyTheOwnersChannels runs the namespace's
// onSubscribe (subscribe.js) under Node with AppSync's util.unauthorized
// stubbed (it throws, as in AppSync), on channels and identities of
// several users.
func TestSubscribeHandlerAllowsOnlyTheOwnersChannels(t *testing.T) {
	cases := []struct {
		name     string
		segments []string
		identity any
		allowed  bool
	}{
		{"own campaign", []string{"campaigns", "u1", "c1"}, map[string]any{"sub": "u1"}, true},
		{"all own campaigns", []string{"campaigns", "u1", "*"}, map[string]any{"sub": "u1"}, true},
		{"another user's campaign", []string{"campaigns", "u2", "c1"}, map[string]any{"sub": "u1"}, false},
		{"everyone's campaigns", []string{"campaigns", "*"}, map[string]any{"sub": "u1"}, false},
		{"wildcard owner", []string{"campaigns", "*", "c1"}, map[string]any{"sub": "u1"}, false},
		{"the namespace root", []string{"campaigns"}, map[string]any{"sub": "u1"}, false},
		{"own sub, no campaign", []string{"campaigns", "u1"}, map[string]any{"sub": "u1"}, false},
		{"no identity", []string{"campaigns", "u1", "c1"}, nil, false},
		{"identity without sub (IAM)", []string{"campaigns", "u1", "c1"}, map[string]any{"accountId": "123456789012"}, false},
		{"empty sub", []string{"campaigns", "", "c1"}, map[string]any{"sub": ""}, false},
	}
	ctxs := make([]any, len(cases))
	for i, c := range cases {
		ctxs[i] = map[string]any{"identity": c.identity,
			"info": map[string]any{"channel": map[string]any{"path": "/" + strings.Join(c.segments, "/"), "segments": c.segments}}}
	}
	in, _ := json.Marshal(ctxs)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "handler.mjs"), []byte(subscribeHandler), 0o600); err != nil {
		t.Fatal(err)
	}
	runner := `globalThis.util = { unauthorized() { throw new Error("Unauthorized"); } };
const { onSubscribe } = await import("./handler.mjs");
const out = JSON.parse(process.argv[2]).map((ctx) => { try { onSubscribe(ctx); return true; } catch (e) { return false; } });
console.log(JSON.stringify(out));`
	if err := os.WriteFile(filepath.Join(dir, "run.mjs"), []byte(runner), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testenv.NodeBin(t), "run.mjs", string(in))
	cmd.Dir = dir
	outb, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, outb)
	}
	var got []bool
	if err := json.Unmarshal(outb, &got); err != nil || len(got) != len(cases) {
		t.Fatalf("node printed %s (%v)", outb, err)
	}
	for i, c := range cases {
		if got[i] != c.allowed {
			t.Errorf("%s: %v subscribes = %v, want %v", c.name, c.segments, got[i], c.allowed)
		}
	}
}
