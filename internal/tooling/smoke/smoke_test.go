package smoke

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/config"
)

func names(steps []Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name)
	}
	return out
}

var happySteps = []string{
	"environment dev",
	"AWS credentials",
	"deploy Unschedule-dev",
	"read the stack outputs",
	"sign up through Cognito (PreSignUp confirms)",
	"sign in (temporary admin-auth app client)",
	"SQS queue subscribed to the user's shard topic",
	`create task "smoke run1 expires" due in 2m0s`,
	`create task "smoke run1 completed" due in 2m0s`,
	`create task "smoke run1 moved" due in 2m0s`,
	"complete a task before its deadline",
	"its schedule is deleted before the deadline",
	"move a deadline 2m0s later",
	"its schedule moves to the new time",
	"the task expires; its notification reaches the queue",
	"the completed task: no notification, no schedule",
	"the moved task: nothing at the old deadline",
	"the moved task expires at the new deadline",
	"cleanup: delete task T3",
	"cleanup: delete task T2",
	"cleanup: delete task T1",
	"cleanup: unsubscribe the queue",
	"cleanup: delete queue unschedule-smoke-run1",
	"cleanup: delete app client client-1",
	"cleanup: delete user unschedule-smoke-run1@example.com",
	"cleanup: destroy Unschedule-dev",
}

func TestRunDrivesTheLifecycleAndCleansUp(t *testing.T) {
	w := newWorld()
	var out bytes.Buffer
	d := w.deps()
	d.Out = &out
	start := w.Now()
	rep, err := Run(context.Background(), Config{Env: "dev", Region: testRegion, RunID: "run1"}, d)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if got := names(rep.Steps); !reflect.DeepEqual(got, happySteps) {
		t.Fatalf("steps\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(happySteps, "\n"))
	}
	t.Run("the calls, in order", func(t *testing.T) {
		want := []string{"credentials", "tags", "deploy", "outputs", "timer tasks", "signup webclient", "create-client eu-west-1_pool",
			"signin client-1", "new-tasks-client https://api.example/prod/ id-token", "create-queue unschedule-smoke-run1"}
		if got := w.calls[:len(want)]; !reflect.DeepEqual(got, want) {
			t.Fatalf("calls %q, want %q", got, want)
		}
		tail := []string{"api-delete T3", "api-delete T2", "api-delete T1", "unsubscribe", "delete-queue",
			"delete-client client-1", "delete-user eu-west-1_pool", "tags", "destroy"}
		if got := w.calls[len(w.calls)-len(tail):]; !reflect.DeepEqual(got, tail) {
			t.Fatalf("cleanup calls %q, want %q", got, tail)
		}
	})
	t.Run("what it creates carries the run's tag", func(t *testing.T) {
		want := map[string]string{RunTag: "run1"}
		if !reflect.DeepEqual(w.queueTags, want) {
			t.Fatalf("queue tags %v, want %v", w.queueTags, want)
		}
		if !strings.Contains(out.String(), "stack created (tag unschedule:smoke-run=run1)") {
			t.Fatalf("the deploy step does not name the stack's tag:\n%s", out.String())
		}
	})
	t.Run("nothing is left", func(t *testing.T) {
		if len(w.users)+len(w.clients)+len(w.queues)+len(w.tasks) != 0 || w.subscription.arn != "" {
			t.Fatalf("left: users %v clients %v queues %v tasks %v subscription %q", w.users, w.clients, w.queues, w.tasks, w.subscription.arn)
		}
	})
	t.Run("the queue is subscribed to the user's shard with their filter", func(t *testing.T) {
		// sub-0001 is on shard 1 of 2.
		wantTopic := "arn:aws:sns:eu-west-1:123456789012:Unschedule-dev-notify-1"
		if w.subscription.topic != wantTopic || w.subscription.filter != `{"userId":["sub-0001"]}` ||
			w.subscription.queueArn != "arn:aws:sqs:eu-west-1:123456789012:unschedule-smoke-run1" {
			t.Fatalf("subscription %+v", w.subscription)
		}
		if !strings.Contains(w.queuePolicy, `"aws:SourceArn":"`+wantTopic+`"`) {
			t.Fatalf("queue policy %s", w.queuePolicy)
		}
	})
	t.Run("the run takes about lead + move + lag, not three times that", func(t *testing.T) {
		if took := w.Now().Sub(start); took < 4*time.Minute || took > 7*time.Minute {
			t.Fatalf("virtual time %s", took)
		}
	})
	t.Run("the report gives each step its latency", func(t *testing.T) {
		report := out.String()
		for _, want := range []*regexp.Regexp{
			regexp.MustCompile(`(?m)^ok +its schedule is deleted before the deadline +4s +deleted 4s after the change$`),
			regexp.MustCompile(`(?m)^ok +the task expires; its notification reaches the queue +1m\d+s +published 1s after the deadline, read 2s after it$`),
			regexp.MustCompile(`(?m)^ok +the moved task expires at the new deadline +\d+s +published 1s after the deadline`),
			regexp.MustCompile(`(?m)^ok +cleanup: destroy Unschedule-dev +0s`),
			regexp.MustCompile(`(?m)^smoke run run1 summary:$`),
		} {
			if !want.MatchString(report) {
				t.Fatalf("report lacks %s:\n%s", want, report)
			}
		}
		if err != nil || strings.Contains(rep.Summary(), "FAIL") {
			t.Fatalf("summary:\n%s", rep.Summary())
		}
	})
}

// TestNoCredentials runs the SDK's real default chain with every source
// emptied (no variables, no files, no instance metadata): the check fails
// at once, without calling AWS.
func TestNoCredentials(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("eu-west-1"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := RequireCredentials(ctx, cfg.Credentials, 5*time.Second); !errors.Is(err, ErrNoCredentials) {
		t.Fatal("credentials found in an emptied environment")
	}
	t.Logf("refused in %s", time.Since(start))

	t.Run("static keys are found", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
		cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("eu-west-1"))
		if err != nil {
			t.Fatal(err)
		}
		if src, err := RequireCredentials(context.Background(), cfg.Credentials, 5*time.Second); err != nil || src == "" {
			t.Fatalf("%q %v", src, err)
		}
	})
	t.Run("no provider", func(t *testing.T) {
		if _, err := RequireCredentials(context.Background(), nil, 5*time.Second); !errors.Is(err, ErrNoCredentials) {
			t.Fatal("no error")
		}
	})
}

func TestRunRefusesWithoutCredentials(t *testing.T) {
	w := newWorld()
	w.failOn["credentials"] = errors.New("failed to refresh cached credentials, no EC2 IMDS role found")
	var out bytes.Buffer
	d := w.deps()
	d.Out = &out
	rep, err := Run(context.Background(), Config{Env: "dev"}, d)
	if !errors.Is(err, ErrNoCredentials) {
		t.Fatalf("err %v, want ErrNoCredentials", err)
	}
	for _, want := range []string{"no AWS credentials", "aws configure", "AWS_PROFILE", "nothing was deployed", "no EC2 IMDS role"} {
		if !strings.Contains(err.Error(), want) || !strings.Contains(out.String(), want) {
			t.Fatalf("message %q (report %q) lacks %q", err, out.String(), want)
		}
	}
	if !reflect.DeepEqual(w.calls, []string{"credentials"}) || len(rep.Steps) != 2 {
		t.Fatalf("calls %q, steps %v: want nothing after the refusal", w.calls, names(rep.Steps))
	}
}

// TestCleanupOnFailure fails one call at a time: the run stops at that
// step and deletes exactly what it had created, last first.
func TestCleanupOnFailure(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		failOn    string
		existed   bool
		keepStack bool
		failStep  string
		cleanups  []string
	}{
		{"deploy", false, false, "deploy Unschedule-dev", []string{"destroy"}},
		{"deploy", true, false, "deploy Unschedule-dev", nil},
		{"deploy", false, true, "deploy Unschedule-dev", nil},
		{"outputs", false, false, "read the stack outputs", []string{"destroy"}},
		// A failed sign-up created no user: there is none to delete (the
		// address may be someone else's).
		{"signup", false, false, "sign up through Cognito (PreSignUp confirms)", []string{"destroy"}},
		{"signup", true, false, "sign up through Cognito (PreSignUp confirms)", nil},
		{"create-client", false, false, "sign in (temporary admin-auth app client)", []string{"delete-user eu-west-1_pool", "destroy"}},
		{"signin", false, false, "sign in (temporary admin-auth app client)",
			[]string{"delete-client client-1", "delete-user eu-west-1_pool", "destroy"}},
		{"create-queue", false, false, "SQS queue subscribed to the user's shard topic",
			[]string{"delete-client client-1", "delete-user eu-west-1_pool", "destroy"}},
		{"subscribe", false, false, "SQS queue subscribed to the user's shard topic",
			[]string{"delete-queue", "delete-client client-1", "delete-user eu-west-1_pool", "destroy"}},
		{"api-update", false, true, "complete a task before its deadline",
			[]string{"api-delete T3", "api-delete T2", "api-delete T1", "unsubscribe", "delete-queue", "delete-client client-1", "delete-user eu-west-1_pool"}},
		{"receive", false, false, "the task expires; its notification reaches the queue",
			[]string{"api-delete T3", "api-delete T2", "api-delete T1", "unsubscribe", "delete-queue", "delete-client client-1", "delete-user eu-west-1_pool", "destroy"}},
	} {
		t.Run(tc.failOn, func(t *testing.T) {
			w := newWorld()
			w.existed = tc.existed
			w.failOn[tc.failOn] = boom
			rep, err := Run(context.Background(), Config{Env: "dev", RunID: "run1", KeepStack: tc.keepStack}, w.deps())
			if !errors.Is(err, boom) || !strings.Contains(err.Error(), tc.failStep) {
				t.Fatalf("err %v, want boom at %q", err, tc.failStep)
			}
			var failed []string
			for _, s := range rep.Steps {
				if s.Err != nil {
					failed = append(failed, s.Name)
				}
			}
			if !reflect.DeepEqual(failed, []string{tc.failStep}) {
				t.Fatalf("failed steps %q", failed)
			}
			if got := cleanupCalls(w.calls); !reflect.DeepEqual(got, tc.cleanups) {
				t.Fatalf("cleanup calls %q, want %q (all calls %q)", got, tc.cleanups, w.calls)
			}
			for _, c := range w.calls {
				if c == "destroy" && (tc.existed || tc.keepStack) {
					t.Fatal("destroyed a stack it did not create, or was asked to keep")
				}
			}
		})
	}
}

// cleanupCalls are the calls that delete something, in order.
func cleanupCalls(calls []string) []string {
	var out []string
	for _, c := range calls {
		for _, p := range []string{"destroy", "delete-", "unsubscribe", "api-delete"} {
			if strings.HasPrefix(c, p) {
				out = append(out, c)
			}
		}
	}
	return out
}

// TestRunRefusesRetainedEnvironments: an environment that retains its
// resources (prod) is refused before anything is called, with the flag
// that allows it named; with that flag the run goes on.
func TestRunRefusesRetainedEnvironments(t *testing.T) {
	for _, tc := range []struct {
		name            string
		retained, allow bool
		refused         bool
	}{
		{"destroy policy", false, false, false},
		{"retained", true, false, true},
		{"retained, allowed", true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			_, err := Run(context.Background(), Config{Env: "prod", RunID: "run1", Retained: tc.retained, AllowRetained: tc.allow}, w.deps())
			if !tc.refused {
				if err != nil || !slices.Contains(w.calls, "deploy") {
					t.Fatalf("err %v, calls %q: want a full run", err, w.calls)
				}
				return
			}
			if !errors.Is(err, ErrRetainedEnvironment) || len(w.calls) != 0 {
				t.Fatalf("err %v, calls %q: want a refusal before any call", err, w.calls)
			}
			for _, want := range []string{`"prod"`, `removalPolicy "retain"`, "-allow-retained", "ENV=dev", "nothing was deployed"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %q lacks %q", err, want)
				}
			}
		})
	}
}

// TestRunDeletesOnlyWhatItCreated: a user whose sign-up failed after it was
// created is deleted; a stack that another party created between the
// existence check and the deploy is not destroyed (it lacks the run's
// tag), and an existing stack is updated without tags.
func TestRunDeletesOnlyWhatItCreated(t *testing.T) {
	t.Run("an unconfirmed user is still deleted", func(t *testing.T) {
		w := newWorld()
		w.bugs["sign-up not confirmed"] = true
		_, err := Run(context.Background(), Config{Env: "dev", RunID: "run1"}, w.deps())
		if err == nil || !strings.Contains(err.Error(), "not confirmed") {
			t.Fatalf("err %v", err)
		}
		if got, want := cleanupCalls(w.calls), []string{"delete-user eu-west-1_pool", "destroy"}; !reflect.DeepEqual(got, want) {
			t.Fatalf("cleanup calls %q, want %q", got, want)
		}
	})
	t.Run("a stack it did not create is not destroyed", func(t *testing.T) {
		w := newWorld()
		w.foreign = true
		rep, err := Run(context.Background(), Config{Env: "dev", RunID: "run1"}, w.deps())
		if slices.Contains(w.calls, "destroy") {
			t.Fatalf("destroyed a stack tagged by another run: %q", w.calls)
		}
		last := rep.Steps[len(rep.Steps)-1]
		if last.Name != "cleanup: destroy Unschedule-dev" || last.Err == nil ||
			!strings.Contains(last.Err.Error(), `not destroyed: stack Unschedule-dev has unschedule:smoke-run="someone-else"`) || err == nil {
			t.Fatalf("last step %+v, err %v", last, err)
		}
	})
	t.Run("an existing stack is updated untagged and kept", func(t *testing.T) {
		w := newWorld()
		w.existed = true
		if _, err := Run(context.Background(), Config{Env: "dev", RunID: "run1"}, w.deps()); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(w.calls, "destroy") || w.stackTags[RunTag] != "" {
			t.Fatalf("calls %q, stack tags %v", w.calls, w.stackTags)
		}
	})
}

// TestCleanupAfterCancel: Ctrl-C mid-run still cleans up, with a live
// context.
func TestCleanupAfterCancel(t *testing.T) {
	w := newWorld()
	ctx, cancel := context.WithCancel(context.Background())
	d := w.deps()
	d.NewTasks = func(string, string) Tasks { cancel(); return fakeAPI{w} }
	rep, err := Run(ctx, Config{Env: "dev", RunID: "run1"}, d)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	// Cancelled during the sign-in: the queue is never made.
	want := []string{"signin client-1", "delete-client client-1", "delete-user eu-west-1_pool", "tags", "destroy"}
	if got := w.calls[len(w.calls)-len(want):]; !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %q, want the cleanup %q", got, want)
	}
	for _, s := range rep.Steps {
		if s.Cleanup && s.Err != nil {
			t.Fatalf("cleanup %s: %v", s.Name, s.Err)
		}
	}
}

// TestRunCatchesDefects injects one defect of the deployed app at a time:
// the run fails at the step that checks it.
func TestRunCatchesDefects(t *testing.T) {
	for _, tc := range []struct {
		bug, step, msg string
	}{
		{"the pipeline does not cancel", "its schedule is deleted before the deadline", "still there at the deadline"},
		{"the pipeline does not move", "its schedule moves to the new time", "did not move it"},
		{"notifies before the deadline", "the task expires; its notification reaches the queue", "before the deadline"},
		{"the expiry does not publish", "the task expires; its notification reaches the queue", "no notification within 5m0s"},
		{"the old deadline fires too", "the moved task: nothing at the old deadline", "for the old deadline"},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			w := newWorld()
			w.bugs[tc.bug] = true
			rep, err := Run(context.Background(), Config{Env: "dev", RunID: "run1"}, w.deps())
			if err == nil || !strings.Contains(err.Error(), tc.step+": "+"") || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err %v, want a failure of %q saying %q", err, tc.step, tc.msg)
			}
			last := rep.Steps[len(rep.Steps)-1]
			if !last.Cleanup || !strings.Contains(rep.Summary(), "FAIL  "+tc.step) {
				t.Fatalf("summary:\n%s", rep.Summary())
			}
		})
	}
}

func TestRunChecksTheRegion(t *testing.T) {
	w := newWorld()
	_, err := Run(context.Background(), Config{Env: "dev", Region: "us-east-1"}, w.deps())
	if err == nil || !strings.Contains(err.Error(), "set AWS_REGION=eu-west-1") {
		t.Fatalf("err %v", err)
	}
}
