package devserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntest"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/suppress"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/todo/todotest"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/memory/snsfake"
)

// reopen opens a server on dir (quiet, on a fixed clock).
func reopen(t *testing.T, dir string, l timerspec.Name) *Server {
	t.Helper()
	now := time.Date(2029, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := Open(Config{DataDir: dir, Timer: l, Now: func() time.Time { return now },
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func closed(t *testing.T, s *Server) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// roundTrip restores into fresh what saved encodes to, as a restart
// does, and returns fresh.
func roundTrip[T json.Unmarshaler](t *testing.T, saved json.Marshaler, fresh T) T {
	t.Helper()
	b, err := json.Marshal(saved)
	if err == nil {
		err = fresh.UnmarshalJSON(b)
	}
	if err != nil {
		t.Fatal(err)
	}
	return fresh
}

// TestReopenKeepsEverything writes every kind of record, closes the
// server, reopens the folder and reads the same records back.
func TestReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	due := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tasks := []task.Task{
		{UserID: "u1", TaskID: "01AAAAAAAAAAAAAAAAAAAAAAAA", Title: "a", Status: task.StatusPending, DueAt: due,
			CreatedAt: due.Add(-time.Hour), UpdatedAt: due.Add(-time.Hour), ScheduleToken: "tok"},
		{UserID: "u2", TaskID: "01BBBBBBBBBBBBBBBBBBBBBBBB", Title: "b", Status: task.StatusExpired, DueAt: due,
			ExpiredAt: due, NotifiedAt: due.Add(time.Second)},
	}
	scheds := []contract.Schedule{task.ScheduleFor(tasks[0])}
	user := User{Sub: "sub-1", Email: "Ada@Example.com", CreatedAt: due,
		Password: PasswordHash{Algorithm: "pbkdf2-sha256", Iterations: 10, Salt: []byte{1, 2}, Hash: []byte{3, 4}}}
	cp := reconcile.Checkpoint{Phase: reconcile.PhaseSchedules, Cursor: "task-x", Offset: 3}

	s := reopen(t, dir, "")
	for _, tk := range tasks {
		s.pipe.Store.Put(tk)
	}
	for _, sc := range scheds {
		if err := s.pipe.Timer.Arm(ctx, sc); err != nil {
			t.Fatal(err)
		}
	}
	must(0, s.db.CreateUser(user))
	topic := LocalTopics(2)[1]
	arn := s.db.sns.Seed(topic, "email", "ada@example.com", map[string]string{"FilterPolicy": `{"userId":["sub-1"]}`}, true)
	e1 := s.db.AppendEmail(Email{Kind: "task-expired", At: due, UserID: "u1", TaskID: tasks[0].TaskID, To: []string{"a@example.com"}, Subject: "s", Body: "b"})
	e2 := s.db.AppendEmail(Email{Kind: "task-expired", At: due, UserID: "u2", Subject: "s2"})
	if e1.Seq != 1 || e2.Seq != 2 {
		t.Fatalf("sequence %d, %d; want 1, 2", e1.Seq, e2.Seq)
	}
	secret := must(s.db.Secret("token", 32))
	must(0, s.db.reconcileCP.Save(ctx, cp))
	// The campaign ports' stores are saved too.
	camp, sends := campaigntest.CampaignFixture(t, "c1", 2, campaigntest.CampaignT0)
	must(0, s.db.campaigns.Create(ctx, camp, sends))
	must(0, s.db.checkpoints.Save(ctx, provision.Checkpoint{CampaignID: "c1", Next: 1}))
	day := limits.Key{Sender: "sub-1", Day: "2030-01-02"}
	if _, ok, err := s.db.limits.Add(ctx, day, due, []limits.Add{{Counter: limits.CounterSends, By: 2, Max: 10}}); !ok || err != nil {
		t.Fatal(ok, err)
	}
	must(s.db.suppressions.Add(ctx, suppress.Entry{Sender: "a@x.io", Address: "b@y.io", Reason: suppress.Bounce, At: due}))
	settings := must(s.db.settings.SaveSettings(ctx, notify.Settings{UserID: "sub-1", TimeZone: "Europe/Berlin", UpdatedAt: due}))
	closed(t, s)

	s = reopen(t, dir, "")
	defer closed(t, s)
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"tasks", s.pipe.Store.All(), tasks},
		{"schedules", s.pipe.Timer.All(), scheds},
		{"user by other case", must(s.db.User("ada@example.COM ")), user},
		{"subscriptions", s.db.sns.Subscriptions("ada@example.com"), []snsfake.Subscription{{Arn: arn, TopicArn: topic,
			Protocol: "email", Endpoint: "ada@example.com", Attributes: map[string]string{"FilterPolicy": `{"userId":["sub-1"]}`}, Confirmed: true}}},
		{"outbox", s.db.Outbox(), []Email{e1, e2}},
		{"secret is kept", must(s.db.Secret("token", 32)), secret},
		{"checkpoint", must(s.db.reconcileCP.Load(ctx)), cp},
		{"campaign", must(s.db.campaigns.Campaign(ctx, "c1")), camp},
		{"send tasks", must(s.db.campaigns.List(ctx, "c1", 0, 10)), sends},
		{"provisioning checkpoint", must(s.db.checkpoints.Load(ctx, "c1")), provision.Checkpoint{CampaignID: "c1", Next: 1}},
		{"sender limits", s.db.limits.Counts(day), map[string]int64{limits.CounterSends: 2}},
		{"suppression", func() bool { _, found, _ := s.db.suppressions.Get(ctx, "B@y.io"); return found }(), true},
		{"settings", must(s.db.settings.LoadSettings(ctx, "sub-1")), settings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !reflect.DeepEqual(tc.got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", tc.got, tc.want)
			}
		})
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestWritesAfterASaveAreSaved: a store whose version moved is encoded
// again; one that did not keeps its last encoding.
func TestWritesAfterASaveAreSaved(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	s := reopen(t, dir, "")
	c, tasks := campaigntest.CampaignFixture(t, "c1", 1, campaigntest.CampaignT0)
	must(0, s.db.campaigns.Create(ctx, c, tasks))
	must(0, s.persist())
	must(0, s.db.campaigns.SetStatus(ctx, "c1", []campaign.Status{campaign.Draft}, campaign.Active, "", campaigntest.CampaignT0))
	s.db.AppendEmail(Email{Kind: "campaign", Subject: "after the save"})
	closed(t, s)
	s = reopen(t, dir, "")
	defer closed(t, s)
	if got := must(s.db.campaigns.Campaign(ctx, "c1")); got.Status != campaign.Active {
		t.Errorf("campaign %s after the restart, want Active", got.Status)
	}
	if got := s.db.Outbox(); len(got) != 1 || got[0].Subject != "after the save" {
		t.Errorf("outbox %+v after the restart", got)
	}
}

// TestSaveRemovesWhatIsGone: a task and schedule deleted before a save
// are gone after a restart; the others stay.
func TestSaveRemovesWhatIsGone(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	a := task.Task{UserID: "u", TaskID: "01AAAAAAAAAAAAAAAAAAAAAAAA", Status: task.StatusPending, DueAt: time.Unix(2e9, 0).UTC()}
	b := task.Task{UserID: "u", TaskID: "01BBBBBBBBBBBBBBBBBBBBBBBB", Status: task.StatusPending, DueAt: time.Unix(2e9, 0).UTC()}
	s := reopen(t, dir, "")
	for _, tk := range []task.Task{a, b} {
		s.pipe.Store.Put(tk)
		must(0, s.pipe.Timer.Arm(ctx, task.ScheduleFor(tk)))
	}
	closed(t, s)
	for _, tc := range []struct {
		name   string
		drop   *task.Task
		tasks  []task.Task
		scheds []contract.Schedule
	}{
		{"two", nil, []task.Task{a, b}, []contract.Schedule{task.ScheduleFor(a), task.ScheduleFor(b)}},
		{"one left", &a, []task.Task{b}, []contract.Schedule{task.ScheduleFor(b)}},
		{"none", &b, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := reopen(t, dir, "")
			if tc.drop != nil {
				must(s.pipe.Store.Delete(ctx, tc.drop.UserID, tc.drop.TaskID))
				must(0, s.pipe.Timer.Disarm(ctx, task.ScheduleFor(*tc.drop).Name, time.Time{}))
				closed(t, s)
				s = reopen(t, dir, "")
			}
			defer closed(t, s)
			if got := s.pipe.Store.All(); len(got)+len(tc.tasks) > 0 && !reflect.DeepEqual(got, tc.tasks) {
				t.Fatalf("tasks %+v, want %+v", got, tc.tasks)
			}
			if got := s.pipe.Timer.All(); len(got)+len(tc.scheds) > 0 && !reflect.DeepEqual(got, tc.scheds) {
				t.Fatalf("schedules %+v, want %+v", got, tc.scheds)
			}
		})
	}
}

func TestUsers(t *testing.T) {
	db := newStore(LocalTopics(1))
	if err := db.CreateUser(User{Sub: "s1", Email: "a@example.com"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"same email, other case, is taken", db.CreateUser(User{Sub: "s2", Email: " A@EXAMPLE.com"}), ErrUserExists},
		{"unknown email", func() error { _, err := db.User("b@example.com"); return err }(), ErrUserNotFound},
		{"another email is free", db.CreateUser(User{Sub: "s3", Email: "c@example.com"}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !errors.Is(tc.err, tc.want) || (tc.err == nil) != (tc.want == nil) {
				t.Fatalf("err %v, want %v", tc.err, tc.want)
			}
		})
	}
}

func TestSecondOpenIsRefused(t *testing.T) {
	dir := t.TempDir()
	s := reopen(t, dir, "")
	if _, err := Open(Config{DataDir: dir}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: err %v, want ErrLocked", err)
	}
	closed(t, s)
	closed(t, reopen(t, dir, "")) // released
}

// TestSettingsContract: the dev server's settings, restored from a save,
// behave like DynamoDB's.
func TestSettingsContract(t *testing.T) {
	todotest.SettingsContract(t, func(t *testing.T) todotest.SettingsStores {
		saved := memory.NewSettings()
		if _, err := saved.SaveSettings(context.Background(), notify.Settings{UserID: "someone-else", TimeZone: "Europe/Berlin"}); err != nil {
			t.Fatal(err)
		}
		return todotest.SettingsStores{Settings: roundTrip(t, saved, memory.NewSettings()), Tasks: memory.NewStore()}
	})
}

// TestCampaignStoreContract: a campaign store restored from a save keeps
// the contract of campaigntable.CampaignStore (its counts and open index
// rebuilt): every conditional write fails where DynamoDB's does.
func TestCampaignStoreContract(t *testing.T) {
	campaigntest.CampaignStoreContract(t, func(t *testing.T) campaigntest.CampaignBackend {
		st := memory.NewCampaignStore()
		return campaigntest.CampaignBackend{Store: st, ErrExists: memory.ErrCampaignExists,
			Put: func(c campaign.Campaign, tasks []campaign.SendTask) error {
				before := memory.NewCampaignStore()
				if err := before.Create(context.Background(), c, tasks); err != nil {
					return err
				}
				roundTrip(t, before, st)
				return nil
			}}
	})
}

func TestCampaignCheckpoints(t *testing.T) {
	saved := memory.NewCampaignCheckpoints()
	must(0, saved.Save(context.Background(), provision.Checkpoint{CampaignID: "other", Next: 3}))
	cps := roundTrip(t, saved, memory.NewCampaignCheckpoints())
	if cp := must(cps.Load(context.Background(), "other")); cp.Next != 3 {
		t.Fatalf("restored checkpoint %+v", cp)
	}
	campaigntest.CheckpointContract(t, cps)
}

// TestCampaignSchedulesRoundTrip: what the campaign timer holds is kept
// across a restart, a schedule disarmed before a save is gone, and two
// schedules of one name at two due times (Step Functions executions)
// are both kept.
func TestCampaignSchedulesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	ct0 := time.Date(2029, 1, 1, 1, 0, 0, 0, time.UTC) // an hour after reopen's clock
	k := contract.Key{Partition: "C#c", Sort: "T#c-00000"}
	at := func(m int) timer.Schedule {
		due := ct0.Add(time.Duration(m) * time.Minute)
		return timer.Schedule{Name: "camp-x", At: due, ClientToken: "tok", Payload: contract.Payload{Key: k, Due: due}}
	}
	other := timer.Schedule{Name: "camp-y", At: ct0, Payload: contract.Payload{Key: contract.Key{Partition: "C#c", Sort: "T#c-00001"}, Due: ct0}}
	s := reopen(t, dir, timerspec.StepFunctions)
	for _, sc := range []timer.Schedule{at(1), other, at(2)} {
		must(0, s.campTimer.Arm(ctx, sc))
	}
	closed(t, s)
	s = reopen(t, dir, timerspec.StepFunctions)
	must(0, s.campTimer.Disarm(ctx, other.Name, other.At))
	closed(t, s)
	s = reopen(t, dir, timerspec.StepFunctions)
	defer closed(t, s)
	if got := s.campTimer.All(); len(got) != 2 || got[0] != at(1) || got[1] != at(2) {
		t.Fatalf("%+v", got)
	}
}

// TestAppendEmailOnce: one email per key, across a restart.
func TestAppendEmailOnce(t *testing.T) {
	dir := t.TempDir()
	ct0 := campaigntest.CampaignT0
	s := reopen(t, dir, "")
	if _, found := s.db.EmailOnce("send-c1-00000"); found {
		t.Fatal("EmailOnce before: found")
	}
	first, isFirst := s.db.AppendEmailOnce("send-c1-00000", Email{Kind: "campaign", At: ct0, To: []string{"a@example.com"}})
	if !isFirst || first.Seq != 1 {
		t.Fatalf("first append = %+v, %v", first, isFirst)
	}
	closed(t, s)
	s = reopen(t, dir, "")
	defer closed(t, s)
	again, isFirst := s.db.AppendEmailOnce("send-c1-00000", Email{Kind: "campaign", At: ct0.Add(time.Hour)})
	if isFirst || again.Seq != 1 || !again.At.Equal(ct0) {
		t.Fatalf("second append = %+v, %v: want the first email", again, isFirst)
	}
	if got, found := s.db.EmailOnce("send-c1-00000"); !found || got.Seq != 1 {
		t.Fatalf("EmailOnce = %+v, %v", got, found)
	}
	if all := s.db.Outbox(); len(all) != 1 {
		t.Fatalf("outbox holds %d emails, want 1", len(all))
	}
}

// TestSenderLimitsContract: counters restored from a save answer as
// limitsdynamo does.
func TestSenderLimitsContract(t *testing.T) {
	campaigntest.LimitsContract(t, func() campaigntest.LimitsReference { return memory.NewSenderLimits() }, func(t *testing.T) campaigntest.LimitsBackend {
		saved := memory.NewSenderLimits()
		other := limits.Key{Sender: "someone-else", Day: "2026-12-02"}
		if _, ok, err := saved.Add(context.Background(), other, time.Time{}, []limits.Add{{Counter: limits.CounterSends, By: 5, Max: 10}}); !ok || err != nil {
			t.Fatal(ok, err)
		}
		l := roundTrip(t, saved, memory.NewSenderLimits())
		if got := l.Counts(other); got[limits.CounterSends] != 5 {
			t.Fatalf("restored counts %v", got)
		}
		return campaigntest.LimitsBackend{Counters: l, Counts: func(_ context.Context, k limits.Key) (map[string]int64, error) { return l.Counts(k), nil }}
	})
}

// TestSuppressionsContract: the dev server's list, restored from a save,
// keeps the suppression contract, and the entries saved.
func TestSuppressionsContract(t *testing.T) {
	ctx := context.Background()
	saved := memory.NewSuppressions()
	kept := suppress.Entry{Sender: "news@x.io", Address: "kept@y.io", Reason: suppress.Complaint, At: campaigntest.CampaignT0, Source: "m/f"}
	must(saved.Add(ctx, kept))
	s := roundTrip(t, saved, memory.NewSuppressions())
	if got, found, err := s.Get(ctx, "Kept@Y.io"); !found || err != nil || !reflect.DeepEqual(got, kept) {
		t.Fatalf("restored %+v, %v, %v; want %+v", got, found, err, kept)
	}
	campaigntest.SuppressionContract(t, s)
}
