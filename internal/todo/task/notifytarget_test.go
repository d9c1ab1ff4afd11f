package task_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// todo is the to-do app in one process: its use cases (Service) and its
// firing (the in-process Firer) on the same store.
type todo struct {
	*task.Service
	*task.Firer
}

// newTodo builds a todo; f's Store, Clock and Log are d's.
func newTodo(d task.Deps, f task.InProcessConfig) (todo, error) {
	svc, err := task.NewService(d)
	if err != nil {
		return todo{}, err
	}
	f.Store, f.Clock, f.Log = d.Store, d.Clock, d.Log
	firer, err := task.InProcess(f)
	return todo{svc, firer}, err
}

func TestNotifyTarget(t *testing.T) {
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	remAt := due.Add(-time.Hour)
	const id = "01JD00000000000000000000AA"
	expired := task.Task{UserID: "u1", TaskID: id, Title: "Renew passport", Description: "at the town hall",
		Status: task.StatusExpired, DueAt: due, Reminder: task.Reminder1h, RemindAt: remAt, ExpiredAt: due}
	pending := expired
	pending.Status, pending.ExpiredAt = task.StatusPending, time.Time{}
	with := func(t task.Task, f func(*task.Task)) *task.Task { f(&t); return &t }
	expiry := contract.Payload{Key: task.Key("u1", id), Due: due}
	reminder := contract.Payload{Key: task.Key("u1", id), Due: due, Remind: remAt}
	errSNS := errors.New("sns down")
	for _, tc := range []struct {
		name       string
		stored     *task.Task
		payload    contract.Payload
		readErr    error
		publishErr error
		want       task.NotifyOutcome
		wantErr    error
		// wantSent is the one message expected (nil: none).
		wantSent *task.Notification
	}{
		{name: "expired: one expiry message with title and link", stored: &expired, payload: expiry, want: task.Notified,
			wantSent: &task.Notification{UserID: "u1", TaskID: id, Title: "Renew passport", Description: "at the town hall",
				DueAt: due, Link: "https://todo.example/#/tasks/" + id}},
		{name: "reminder: reminder message", stored: &pending, payload: reminder, want: task.Notified,
			wantSent: &task.Notification{UserID: "u1", TaskID: id, Title: "Renew passport", Description: "at the town hall",
				DueAt: due, Link: "https://todo.example/#/tasks/" + id, Reminder: task.Reminder1h}},
		{name: "task deleted after the claim: nothing sent, not retried", payload: expiry, want: task.NotifyGone},
		{name: "reminder's task deleted after the claim", payload: reminder, want: task.NotifyGone},
		{name: "reminder's task completed after the claim: nothing sent", payload: reminder, want: task.NotifyStale,
			stored: with(pending, func(t *task.Task) { t.Status = task.StatusDone })},
		{name: "reminder's deadline moved after the claim: nothing sent", payload: reminder, want: task.NotifyStale,
			stored: with(pending, func(t *task.Task) { t.DueAt, t.RemindAt = due.Add(time.Hour), due })},
		{name: "reminder's task expired meanwhile: no reminder", stored: &expired, payload: reminder, want: task.NotifyStale},
		{name: "expiry of a task another writer made pending again: nothing sent", stored: &pending, payload: expiry,
			want: task.NotifyStale},
		{name: "publish fails: error, so the firing is retried", stored: &expired, payload: expiry, publishErr: errSNS,
			wantErr: errSNS},
		{name: "reminder publish fails: error", stored: &pending, payload: reminder, publishErr: errSNS, wantErr: errSNS},
		{name: "read fails: error", stored: &expired, payload: expiry, readErr: errDB, wantErr: errDB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.NewStore()
			if tc.stored != nil {
				store.Put(*tc.stored)
			}
			store.Fail = func(string) error { return tc.readErr }
			outbox := &memory.Outbox{Fail: func(task.Notification) error { return tc.publishErr }}
			target, err := task.NewNotifyTarget(task.NotifyConfig{Tasks: store, Notifier: outbox, WebURL: "https://todo.example/",
				Now: func() time.Time { return due.Add(time.Minute) }})
			if err != nil {
				t.Fatal(err)
			}
			got, err := target.Notify(context.Background(), tc.payload)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.wantErr == nil && got != tc.want {
				t.Errorf("outcome = %q, want %q", got, tc.want)
			}
			sent := outbox.Sent()
			switch {
			case tc.wantSent == nil && len(sent) != 0:
				t.Errorf("sent %+v, want nothing", sent)
			case tc.wantSent != nil && (len(sent) != 1 || sent[0] != *tc.wantSent):
				t.Errorf("sent %+v, want one: %+v", sent, *tc.wantSent)
			}
			// A sent expiry is recorded with the task store's own write
			// (which keeps the table's indexes); nothing else is.
			store.Fail = nil
			if cur, err := store.Get(context.Background(), "u1", id); err == nil {
				recorded := !cur.NotifiedAt.IsZero()
				if want := tc.wantSent != nil && tc.wantSent.Reminder == ""; recorded != want {
					t.Errorf("notification recorded: %v, want %v", recorded, want)
				}
			}
		})
	}
}

// TestFirerDeliversToTheTarget: the composition runs the target once per
// claim, with the payload the core delivers to any target, and records
// the delivery; a failed target leaves it to a retry.
func TestFirerDeliversToTheTarget(t *testing.T) {
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	const id = "01JD00000000000000000000AB"
	pending := task.Task{UserID: "u1", TaskID: id, Title: "t", Status: task.StatusPending, DueAt: due}
	for _, tc := range []struct {
		name      string
		targetErr []error // one per attempt
		want      []task.ExpireOutcome
	}{
		{"delivered once", []error{nil, nil}, []task.ExpireOutcome{task.Expired, task.Skipped}},
		{"failed target is retried after the lease", []error{errSNS, nil, nil},
			[]task.ExpireOutcome{"", task.Renotified, task.Skipped}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.NewStore()
			store.Put(pending)
			now := due
			core, err := fire.New(fire.Config{Schema: task.Schema, Store: task.Items(store), Now: func() time.Time { return now }})
			if err != nil {
				t.Fatal(err)
			}
			var got []contract.Payload
			attempt := 0
			target := fire.DeliverFunc(func(_ context.Context, p contract.Payload) error {
				got = append(got, p)
				return tc.targetErr[attempt]
			})
			f, err := task.NewFirer(core, task.Items(store), target)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.want {
				attempt = i
				out, err := f.Expire(context.Background(), task.ExpireRequest{UserID: "u1", TaskID: id, DueAt: due})
				if (err != nil) != (want == "") || out != want {
					t.Fatalf("attempt %d: %q, %v; want %q", i, out, err, want)
				}
				now = now.Add(fire.DefaultLease)
			}
			for _, p := range got {
				if p.Key != task.Key("u1", id) || !p.Due.Equal(due) || p.IsReminder() {
					t.Errorf("target got %+v", p)
				}
			}
			if cur, _ := store.Get(context.Background(), "u1", id); cur.NotifiedAt.IsZero() {
				t.Errorf("delivery not recorded: %+v", cur)
			}
		})
	}
}

// TestFirerFiresTheTodoPayloads: the to-do app as its firing function
// runs it (lambdas/todofire: the firing core over the task table,
// delivering to task.NotifyTarget), each case the firing function's
// (firefn's handler test, where each outcome is its metric, runs the
// same cases on the core's fixture table): the task's status and the
// notifications sent after each schedule's payload.
func TestFirerFiresTheTodoPayloads(t *testing.T) {
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	const id = "01JD00000000000000000000AA"
	pending := task.Task{UserID: "u1", TaskID: id, Title: "t", Status: task.StatusPending, DueAt: due, ScheduleToken: "tok"}
	// Expired by a concurrent firing that is publishing right now.
	claimed := pending
	claimed.Status, claimed.ExpiredAt, claimed.NotifyClaimAt = task.StatusExpired, due, due.Add(20*time.Second)
	payload := func(dueAt time.Time) []byte {
		return []byte(task.EncodePayload(task.Payload{Key: task.Key("u1", id), Due: dueAt}))
	}
	// A reminder 15 minutes before a later deadline (the clock reads due+30s).
	remDue := due.Add(15 * time.Minute)
	reminding := pending
	reminding.DueAt, reminding.Reminder, reminding.RemindAt = remDue, task.Reminder15m, due
	remPayload := func(dueAt, at time.Time) []byte {
		return []byte(task.EncodePayload(task.Payload{Key: task.Key("u1", id), Due: dueAt, Remind: at}))
	}
	// Fired 29 s before their time (EventBridge Scheduler's minute).
	early := pending
	early.DueAt = due.Add(59 * time.Second)
	earlyRem := reminding
	earlyRem.RemindAt = due.Add(59 * time.Second)
	errBadInput := errors.New("not a schedule payload")
	for _, tc := range []struct {
		name       string
		stored     *task.Task
		payload    []byte
		publishErr error
		// want is the firing's outcome; wantErr its error (errSNS: the
		// target's, errBadInput: a payload that does not decode).
		want       fire.Outcome
		wantErr    error
		wantSent   int
		wantStatus task.Status
	}{
		{"expires and notifies", &pending, payload(due), nil, fire.Fired, nil, 1, task.StatusExpired},
		{"stale deadline skipped", &pending, payload(due.Add(-time.Hour)), nil, fire.Skipped, nil, 0, task.StatusPending},
		{"gone task skipped", nil, payload(due), nil, fire.Skipped, nil, 0, ""},
		{"publish failure is retried", &pending, payload(due), errSNS, "", errSNS, 0, task.StatusExpired},
		{"another attempt is publishing: retry later", &claimed, payload(due), nil, "", fire.ErrInProgress, 0, task.StatusExpired},
		{"not our payload", &pending, []byte(`{"hello":1}`), nil, "", errBadInput, 0, task.StatusPending},
		{"reminder payload reminds, task stays pending", &reminding, remPayload(remDue, due), nil, fire.Fired, nil, 1, task.StatusPending},
		{"stale reminder skipped", &reminding, remPayload(remDue, due.Add(-time.Hour)), nil, fire.Skipped, nil, 0, task.StatusPending},
		{"reminder publish failure is retried", &reminding, remPayload(remDue, due), errSNS, "", errSNS, 0, task.StatusPending},
		{"an early firing fails, so Lambda retries it", &early, payload(early.DueAt), nil, "", fire.ErrTooEarly, 0, task.StatusPending},
		{"an early reminder fails, so Lambda retries it", &earlyRem, remPayload(remDue, earlyRem.RemindAt), nil, "", fire.ErrTooEarly, 0, task.StatusPending},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.NewStore()
			if tc.stored != nil {
				store.Put(*tc.stored)
			}
			outbox := &memory.Outbox{Fail: func(task.Notification) error { return tc.publishErr }}
			now := func() time.Time { return due.Add(30 * time.Second) }
			core, err := fire.New(fire.Config{Schema: task.Schema, Store: task.Items(store), Now: now})
			if err != nil {
				t.Fatal(err)
			}
			target, err := task.NewNotifyTarget(task.NotifyConfig{Tasks: store, Notifier: outbox, Now: now, Log: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			f, err := task.NewFirer(core, task.Items(store), target)
			if err != nil {
				t.Fatal(err)
			}
			var out fire.Outcome
			p, err := task.Schema.DecodePayload(tc.payload)
			if err != nil {
				err = fmt.Errorf("%w: %w", errBadInput, err)
			} else {
				out, err = f.Fire(context.Background(), p)
			}
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil && err != nil) || out != tc.want {
				t.Fatalf("fire = %q, %v; want %q, %v", out, err, tc.want, tc.wantErr)
			}
			if got := len(outbox.Sent()); got != tc.wantSent {
				t.Fatalf("sent %d, want %d", got, tc.wantSent)
			}
			if tc.stored != nil {
				got, _ := store.Get(context.Background(), "u1", id)
				if got.Status != tc.wantStatus {
					t.Fatalf("status %s, want %s", got.Status, tc.wantStatus)
				}
			}
		})
	}
}
