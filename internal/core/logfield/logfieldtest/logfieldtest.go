// Package logfieldtest captures a function's JSON log lines in tests, to
// check that its outcome lines name their item in logfield.Key.
package logfieldtest

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/internal/core/logfield"
)

// Capture holds the lines of the logger New returned.
type Capture struct{ buf bytes.Buffer }

// New returns a JSON logger (as lambdaenv.Logger writes) and the capture
// of its lines.
func New() (*slog.Logger, *Capture) {
	c := &Capture{}
	return slog.New(slog.NewJSONHandler(&c.buf, nil)), c
}

// Lines are the lines logged so far, decoded.
func (c *Capture) Lines(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(c.buf.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %s", l)
		}
		out = append(out, m)
	}
	return out
}

// RequireKey fails t unless a line says msg, and every line that says it
// carries key in logfield.Key.
func (c *Capture) RequireKey(t testing.TB, msg, key string) {
	t.Helper()
	found := false
	for _, l := range c.Lines(t) {
		if l["msg"] != msg {
			continue
		}
		found = true
		if l[logfield.Key] != key {
			t.Errorf("%q has %s = %v, want %s", msg, logfield.Key, l[logfield.Key], key)
		}
	}
	if !found {
		t.Errorf("no %q line in:\n%s", msg, c.buf.String())
	}
}
