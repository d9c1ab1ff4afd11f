package boltstore

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func open(t *testing.T, dir string) *DB {
	t.Helper()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// TestReopenKeepsEverything writes every kind of record, closes the file,
// reopens it and reads the same records back.
func TestReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
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
	sub := Subscription{Arn: "arn:local:sns:t0:1", TopicArn: "arn:local:sns:t0", Protocol: "email",
		Endpoint: "Ada@Example.com", FilterPolicy: `{"userId":["sub-1"]}`, Confirmed: true}
	cp := reconcile.Checkpoint{Phase: reconcile.PhaseSchedules, Cursor: "task-x", Offset: 3}

	db := open(t, dir)
	if err := db.ReplaceTasks(tasks); err != nil {
		t.Fatal(err)
	}
	if err := db.ReplaceSchedules(scheds); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateUser(user); err != nil {
		t.Fatal(err)
	}
	if err := db.PutSubscription(sub); err != nil {
		t.Fatal(err)
	}
	e1, err := db.AppendEmail(Email{Kind: "task-expired", At: due, UserID: "u1", TaskID: tasks[0].TaskID, To: []string{"a@example.com"}, Subject: "s", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	e2, err := db.AppendEmail(Email{Kind: "task-expired", At: due, UserID: "u2", Subject: "s2"})
	if err != nil {
		t.Fatal(err)
	}
	if e1.Seq != 1 || e2.Seq != 2 {
		t.Fatalf("sequence %d, %d; want 1, 2", e1.Seq, e2.Seq)
	}
	secret, err := db.Secret("token", 32)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Save(context.Background(), cp); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open(t, dir)
	defer db.Close()
	for _, tc := range []struct {
		name      string
		got, want any
		err       error
	}{
		{"tasks", must(db.Tasks()), tasks, nil},
		{"schedules", must(db.Schedules()), scheds, nil},
		{"user by other case", must(db.User("ada@example.COM ")), user, nil},
		{"subscriptions", must(db.Subscriptions()), []Subscription{sub}, nil},
		{"outbox", must(db.Outbox()), []Email{e1, e2}, nil},
		{"secret is kept", must(db.Secret("token", 32)), secret, nil},
		{"checkpoint", must(db.Load(context.Background())), cp, nil},
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

func TestReplaceRemovesWhatIsGone(t *testing.T) {
	db := open(t, t.TempDir())
	defer db.Close()
	a := task.Task{UserID: "u", TaskID: "01AAAAAAAAAAAAAAAAAAAAAAAA", DueAt: time.Unix(100, 0).UTC()}
	b := task.Task{UserID: "u", TaskID: "01BBBBBBBBBBBBBBBBBBBBBBBB", DueAt: time.Unix(100, 0).UTC()}
	for _, tc := range []struct {
		name   string
		tasks  []task.Task
		scheds []contract.Schedule
	}{
		{"two", []task.Task{a, b}, []contract.Schedule{task.ScheduleFor(a), task.ScheduleFor(b)}},
		{"one left", []task.Task{b}, []contract.Schedule{task.ScheduleFor(b)}},
		{"none", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := db.ReplaceTasks(tc.tasks); err != nil {
				t.Fatal(err)
			}
			if err := db.ReplaceSchedules(tc.scheds); err != nil {
				t.Fatal(err)
			}
			if got := must(db.Tasks()); !reflect.DeepEqual(got, tc.tasks) {
				t.Fatalf("tasks %+v, want %+v", got, tc.tasks)
			}
			if got := must(db.Schedules()); !reflect.DeepEqual(got, tc.scheds) {
				t.Fatalf("schedules %+v, want %+v", got, tc.scheds)
			}
		})
	}
}

func TestUsers(t *testing.T) {
	db := open(t, t.TempDir())
	defer db.Close()
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
	db := open(t, dir)
	defer db.Close()
	if _, err := Open(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: err %v, want ErrLocked", err)
	}
}

// TestSettingsContract: the dev server's settings behave like DynamoDB's.
func TestSettingsContract(t *testing.T) {
	testenv.SettingsContract(t, func(t *testing.T) testenv.SettingsStores {
		db := open(t, t.TempDir())
		t.Cleanup(func() { _ = db.Close() })
		return testenv.SettingsStores{Settings: db, Tasks: memory.NewStore()}
	})
}
