package ops_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/ops"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/devserver"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// runbookCommands are the unschedule lines of docs/operations.md's sh
// blocks, in order.
func runbookCommands(t *testing.T) []string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in && strings.HasPrefix(line, "unschedule "):
			out = append(out, strings.TrimPrefix(line, "unschedule "))
		}
	}
	if len(out) < 8 {
		t.Fatalf("docs/operations.md has %d unschedule commands, want the runbook's 8 or more", len(out))
	}
	return out
}

// words splits a command line as sh would, for the runbook's simple
// lines: spaces, and double quotes around a word.
func words(line string, vars map[string]string) []string {
	for k, v := range vars {
		line = strings.ReplaceAll(line, "$"+k, v)
	}
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any || cur.Len() > 0 {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
		}
	}
	if any || cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// TestRunbookOnTheLocalWorld runs every command of docs/operations.md
// against make dev's server (--dev instead of --stack), on a world with a
// lost schedule and an orphaned one: each command succeeds or reports the
// problem, and after the runbook nothing is left to repair.
func TestRunbookOnTheLocalWorld(t *testing.T) {
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	c := clock.NewFake(now)
	srv, err := devserver.Open(devserver.Config{DataDir: t.TempDir(), Now: c.Now, FakeClock: c,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	p := srv.Pipeline()
	lost := cliTask("01JD0000000000000000000031", now.Add(time.Hour))
	p.Store.Put(lost) // written without its schedule: a lost one
	if err := p.Timer.Arm(context.Background(), task.ScheduleFor(cliTask("01JD0000000000000000000032", now.Add(time.Hour)))); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"STACK": "unused", "USER_SUB": lost.UserID, "TASK_ID": lost.TaskID}
	run1 := func(line string) (string, int) {
		args := words(line, vars)
		for i := 0; i < len(args); i++ {
			if args[i] == "--stack" {
				args[i], args[i+1] = "--dev", hs.URL
			}
		}
		var out, errb bytes.Buffer
		code := ops.Run(context.Background(), append(args, "--quiet"), &out, &errb, func(context.Context, string) (*ops.World, error) {
			t.Fatal("a --dev command opened a stack")
			return nil, nil
		})
		if code != ops.ExitOK && code != ops.ExitProblem {
			t.Errorf("unschedule %s: exit %d: %s%s", line, code, out.String(), errb.String())
		}
		return out.String(), code
	}
	cmds := runbookCommands(t)
	firstDrift := true
	for _, line := range cmds {
		_, code := run1(line)
		if strings.HasPrefix(line, "drift ") && !strings.Contains(line, "--repair") && firstDrift {
			firstDrift = false
			if code != ops.ExitProblem {
				t.Errorf("the first drift found nothing (exit %d): the world's drift is not seen", code)
			}
		}
	}
	if out, code := run1(cmds[len(cmds)-1]); code != ops.ExitOK || !strings.Contains(out, "missing                  0") {
		t.Errorf("after the runbook, %s: exit %d\n%s", cmds[len(cmds)-1], code, out)
	}
	if _, ok := p.Timer.Lookup(task.ScheduleFor(lost).Name); !ok {
		t.Error("the lost schedule was not made again")
	}
}
