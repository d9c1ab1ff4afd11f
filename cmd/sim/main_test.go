package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/tooling/sim"
)

// TestFlags: -timer and -workload pick the runs (every workload on every
// timer), -layer still works with a note, and bad values
// are refused with the flag's name.
func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		rc   int
		want []string
		not  []string
	}{
		{"every workload on every timer", []string{"-seeds", "2", "-timer", "all", "-workload", "all"}, 0,
			[]string{"== timer EventBridgeScheduler, workload tasks", "== timer StepFunctions, workload tasks", "== timer TTL, workload tasks",
				"== timer EventBridgeScheduler, workload campaigns", "== timer TTL, workload campaigns", "== timer StepFunctions, workload campaigns",
				"== timer TTL, workload futureevents", "== timer TTL, workload deferredjobs",
				"all invariants held (I1-I6)", "all invariants held (C1-C5)", "all invariants held (F1-F6)", "all invariants held (J1-J5)"}, nil},
		{"campaigns replay with a trace", []string{"-seed", "3", "-workload", "campaigns"}, 0,
			[]string{"campaign of", "sends:", "ok"}, []string{"== timer"}},
		{"future events on every timer", []string{"-seeds", "2", "-timer", "all", "-workload", "futureevents"}, 0,
			[]string{"== timer EventBridgeScheduler, workload futureevents", "== timer StepFunctions, workload futureevents",
				"== timer TTL, workload futureevents", "events scheduled", "all invariants held (F1-F6)"}, nil},
		{"deferred jobs on every timer", []string{"-seeds", "2", "-timer", "all", "-workload", "deferredjobs"}, 0,
			[]string{"== timer EventBridgeScheduler, workload deferredjobs", "== timer StepFunctions, workload deferredjobs",
				"== timer TTL, workload deferredjobs", "jobs queued", "all invariants held (J1-J5)"}, nil},
		{"deferred jobs replay with a trace", []string{"-seed", "3", "-workload", "deferredjobs"}, 0,
			[]string{"activity of shop-", "jobs queued", "ok"}, []string{"== timer"}},
		{"the old -layer flag", []string{"-seeds", "1", "-layer", "ttl"}, 0,
			[]string{"note: -layer is deprecated: use -timer", "all invariants held (I1-I6)"}, nil},
		{"campaigns on the TTL timer", []string{"-seeds", "1", "-timer", "ttl", "-workload", "campaigns"}, 0,
			[]string{"all invariants held (C1-C5)"}, nil},
		{"unknown workload", []string{"-workload", "jobs"}, 2, []string{"-workload:", `"jobs"`}, nil},
		{"unknown timer", []string{"-timer", "cron"}, 2, []string{"-timer:", `"cron"`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if rc := run(tc.args, &out); rc != tc.rc {
				t.Fatalf("rc %d, want %d:\n%s", rc, tc.rc, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("output has %q:\n%s", n, out.String())
				}
			}
		})
	}
}

// TestReplayFlags: a failing seed's replay command names its workload,
// timer and task options, and they parse back.
func TestReplayFlags(t *testing.T) {
	for _, tc := range []struct {
		cfg  sim.Config
		want string
	}{
		{sim.Config{ConcurrentFires: true}, ""},
		{sim.Config{Timer: timerspec.TTL, AnyWriter: true}, " -timer TTL -concurrent-fires=false -any-writer"},
		{sim.Config{Workload: sim.WorkloadCampaigns, ConcurrentFires: true}, " -workload campaigns"},
		{sim.Config{Workload: sim.WorkloadFutureEvents, Timer: timerspec.StepFunctions}, " -timer StepFunctions -workload futureevents"},
		{sim.Config{Workload: sim.WorkloadDeferredJobs, ConcurrentFires: true}, " -workload deferredjobs"},
	} {
		got := replayFlags(tc.cfg)
		if got != tc.want {
			t.Errorf("replayFlags(%+v) = %q, want %q", tc.cfg, got, tc.want)
		}
		if rc := run(append(strings.Fields(got), "-seed", "1"), &bytes.Buffer{}); rc != 0 {
			t.Errorf("replay with %q: rc %d", got, rc)
		}
	}
}
