package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/awsscheduler"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

var quiet = slog.New(slog.DiscardHandler)

func fixture(t *testing.T) events.EventBridgeEvent {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "scheduled.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ev events.EventBridgeEvent
	if err := json.Unmarshal(b, &ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

type clock struct{ t time.Time }

func (c *clock) Now() time.Time                                 { return c.t }
func (c *clock) sleep(_ context.Context, d time.Duration) error { c.t = c.t.Add(d); return nil }

type checkpoints struct{ cp reconcile.Checkpoint }

func (c *checkpoints) Load(context.Context) (reconcile.Checkpoint, error) { return c.cp, nil }
func (c *checkpoints) Save(_ context.Context, cp reconcile.Checkpoint) error {
	c.cp = cp
	return nil
}

// target counts the deliveries of the firing core, by key.
type target struct{ sent map[contract.Key]int }

func (d *target) Deliver(_ context.Context, p contract.Payload) error {
	d.sent[p.Key]++
	return nil
}

// A scheduled event runs the reconciler: the item missing its schedule
// gets one, the overdue one is fired and delivered, and the run's counts
// are flushed as metrics. The reconciler runs on the core's stand-ins: the
// fixture's table (inmem.Items) read through an armed index that records
// confirmations and repair marks (inmem.Marking), the memory scheduler,
// and the firing core delivering to a counting target.
func TestHandleRunsTheReconciler(t *testing.T) {
	ev := fixture(t)
	c := &clock{t: ev.Time}
	s := timertest.Schema
	marks := armedindex.Spec{ConfirmedAttr: "scheduledFor", RepairAttr: "scheduleRepair", UpdatedAttr: "updatedAt"}.WithDefaults(s)
	items, sched, delivered := inmem.NewItems(s), inmem.NewScheduler(), &target{sent: map[contract.Key]int{}}
	missing := contract.Item{Key: contract.Key{Partition: "u1", Sort: "01JD00000000000000000000AA"}, State: "Pending",
		Due: ev.Time.Add(time.Hour), Token: "tok"}
	overdue := contract.Item{Key: contract.Key{Partition: "u1", Sort: "01JD00000000000000000000BB"}, State: "Pending",
		Due: ev.Time.Add(-time.Hour), Token: "tok"}
	for _, it := range []contract.Item{missing, overdue} {
		a := s.Attrs(it.Key)
		a[s.StateAttr], a[s.DueAttr], a[s.TokenAttr] = it.State, contract.FormatTime(it.Due), it.Token
		if it == missing {
			a[marks.RepairAttr] = "true"
		}
		if err := items.Put(a); err != nil {
			t.Fatal(err)
		}
	}
	core, err := fire.New(fire.Config{Schema: s, Store: items, Now: c.Now, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rec := metrics.New(FunctionName, &out)
	r, err := reconcile.New(reconcile.Config{}, reconcile.Deps{Schema: s,
		Items: inmem.Marking{Armed: inmem.Armed{Items: items, Index: &marks, Now: c.Now}}, Scheduler: sched, Schedules: sched,
		Firer: fire.Firing{Core: core, Target: delivered}, Checkpoints: &checkpoints{}, Clock: c, Sleep: c.sleep, Metrics: rec, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	h := &handler{run: r, metrics: rec, log: quiet, margin: StopMargin}
	if err := h.handle(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if sc, ok := sched.Lookup(s.ScheduleName(missing.Key)); !ok || sc != s.ScheduleFor(missing) {
		t.Errorf("schedule %+v (present %v), want %+v", sc, ok, s.ScheduleFor(missing))
	}
	if n := delivered.sent[overdue.Key]; n != 1 {
		t.Errorf("%d deliveries for the overdue item, want 1", n)
	}
	for _, want := range []string{`"SchedulesCreated":1`, `"ItemsFired":1`, `"RepairFlagsCleared":1`, `"PassesCompleted":1`,
		`"ItemsChecked":2`, `"Repaired":2`, `"LeftOver":0`,
		`"Function":"reconciler"`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("metrics %s lack %s", out.String(), want)
		}
	}
}

type fakeRunner struct {
	deadline time.Time
	has      bool
	err      error
}

func (f *fakeRunner) Run(ctx context.Context) (reconcile.Result, error) {
	f.deadline, f.has = ctx.Deadline()
	return reconcile.Result{}, f.err
}

type flushes struct{ n int }

func (f *flushes) Flush() error { f.n++; return nil }

func TestHandleDeadlineAndErrors(t *testing.T) {
	lambdaDeadline := time.Now().Add(time.Hour)
	tests := []struct {
		name         string
		ctx          func() (context.Context, context.CancelFunc)
		runErr       error
		wantDeadline time.Time
		wantErr      bool
	}{
		{"stops a margin before the invocation's deadline", func() (context.Context, context.CancelFunc) {
			return context.WithDeadline(context.Background(), lambdaDeadline)
		}, nil, lambdaDeadline.Add(-StopMargin), false},
		{"no deadline, none added", func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, nil, time.Time{}, false},
		{"a failed run fails the invocation", func() (context.Context, context.CancelFunc) {
			return context.WithCancel(context.Background())
		}, errors.New("list schedules: throttled"), time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			run, fl := &fakeRunner{err: tt.runErr}, &flushes{}
			err := (&handler{run: run, metrics: fl, log: quiet, margin: StopMargin}).handle(ctx, fixture(t))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !run.deadline.Equal(tt.wantDeadline) || run.has != !tt.wantDeadline.IsZero() {
				t.Errorf("run deadline %v (set %v), want %v", run.deadline, run.has, tt.wantDeadline)
			}
			if fl.n != 1 {
				t.Errorf("%d metric flushes, want 1", fl.n)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	base := map[string]string{"TABLE_NAME": "items", "SCHEDULE_GROUP": "g", "SCHEDULE_TARGET_ARN": "arn:fn",
		"SCHEDULER_ROLE_ARN": "arn:role", "SCHEDULER_DLQ_ARN": "arn:dlq",
		"TARGET_FUNCTION_ARN": "arn:target",
		contract.EnvVar:       timertest.Schema.EnvValue()}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for kk, vv := range base {
			m[kk] = vv
		}
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		want    reconcile.Config
		wantErr string
	}{
		{"defaults", base, reconcile.Config{}, ""},
		{"tuned", with("GRACE_SEC", "600"), reconcile.Config{Grace: 10 * time.Minute}, ""},
		{"rate and budget", func() map[string]string {
			m := with("RATE_PER_SEC", "2.5")
			m["BUDGET_SEC"] = "120"
			return m
		}(), reconcile.Config{RatePerSec: 2.5, Budget: 2 * time.Minute}, ""},
		{"no table", with("TABLE_NAME", ""), reconcile.Config{}, "TABLE_NAME"},
		{"no group", with("SCHEDULE_GROUP", ""), reconcile.Config{}, "SCHEDULE_GROUP"},
		{"no target", with("SCHEDULE_TARGET_ARN", ""), reconcile.Config{}, "SCHEDULE_TARGET_ARN"},
		{"no role", with("SCHEDULER_ROLE_ARN", ""), reconcile.Config{}, "SCHEDULER_ROLE_ARN"},
		{"no dlq", with("SCHEDULER_DLQ_ARN", ""), reconcile.Config{}, "SCHEDULER_DLQ_ARN"},
		{"no target function", with("TARGET_FUNCTION_ARN", ""), reconcile.Config{}, "TARGET_FUNCTION_ARN"},
		{"a target function and a firing function", with("FIRE_FUNCTION_ARN", "arn:fire"), reconcile.Config{}, "exactly one"},
		{"bad lease", with("FIRE_LEASE_SECONDS", "0"), reconcile.Config{}, "FIRE_LEASE_SECONDS"},
		{"no schema", with(contract.EnvVar, ""), reconcile.Config{}, contract.EnvVar + " is not set"},
		{"bad grace", with("GRACE_SEC", "5m"), reconcile.Config{}, `GRACE_SEC must be a whole number from 1 to 86400 (given "5m")`},
		{"zero budget", with("BUDGET_SEC", "0"), reconcile.Config{}, "BUDGET_SEC"},
		{"negative rate", with("RATE_PER_SEC", "-1"), reconcile.Config{}, "RATE_PER_SEC"},
		{"the default armed index", with("RECONCILE_ARMED_INDEX", `{"name":"armed"}`), reconcile.Config{}, ""},
		{"a sharded armed index", with("RECONCILE_ARMED_INDEX", `{"name":"pending","partitionAttr":"pendingShard","partitions":["0","1"]}`), reconcile.Config{}, ""},
		{"an armed index that is not JSON", with("RECONCILE_ARMED_INDEX", "pending"), reconcile.Config{}, "RECONCILE_ARMED_INDEX: not an armed index spec"},
		{"a sharded index without partitions", with("RECONCILE_ARMED_INDEX", `{"name":"pending","partitionAttr":"pendingShard"}`), reconcile.Config{}, "Partitions needs 1 to 100 values"},
		{"an unknown timer", with("UNSCHEDULE_TIMER", "cron"), reconcile.Config{}, "UNSCHEDULE_TIMER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Reconcile != tt.want || got.Table != "items" || got.Timer.Adapter.(awsscheduler.Config).GroupName != "g" || got.Target != "arn:target" ||
				got.Lease != fire.DefaultLease {
				t.Errorf("loadConfig = %+v, want reconcile %+v", got, tt.want)
			}
			if want := tt.env["RECONCILE_ARMED_INDEX"] != ""; got.HasIndex != want || (want && got.Index.Name == "") {
				t.Errorf("index %+v (set %v), want one: %v", got.Index, got.HasIndex, want)
			}
		})
	}
}
