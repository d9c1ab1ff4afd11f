package task_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// expireClock is a clock the test moves.
type expireClock struct{ t time.Time }

func (c *expireClock) Now() time.Time { return c.t }

const expireTaskID = "01J8ZQ2K3M4N5P6Q7R8S9T0V1W"

var (
	expireDue = time.Date(2030, 5, 6, 7, 8, 9, 0, time.UTC)
	errSNS    = errors.New("sns unavailable")
	errDB     = errors.New("dynamodb unavailable")
)

// expireAttempt is one invocation of Expire, e.g. by the scheduler's retry.
type expireAttempt struct {
	// after is when the attempt runs, after the case's now.
	after time.Duration
	// failPublish makes this attempt's publish fail.
	failPublish bool
	// failMark makes this attempt's MarkNotified fail: the shape of a
	// crash after the publish and before it was recorded.
	failMark bool
	// failClaim makes this attempt's ClaimNotification fail with errDB.
	failClaim bool
	// concurrent runs a second invocation while this one publishes; it
	// must return concurrentOut and concurrentErr.
	concurrent    bool
	concurrentOut task.ExpireOutcome
	concurrentErr error
	want          task.ExpireOutcome
	wantErr       error
}

// lease is the default notify lease; attempts a lease apart may take over.
const lease = task.DefaultNotifyLease

func TestExpireNotifiesOnce(t *testing.T) {
	pending := task.Task{UserID: "user-1", TaskID: expireTaskID, Title: "Renew passport",
		Status: task.StatusPending, DueAt: expireDue, CreatedAt: expireDue.Add(-time.Hour)}
	with := func(f func(*task.Task)) *task.Task {
		t := pending
		f(&t)
		return &t
	}
	for _, tc := range []struct {
		name string
		// stored is the task before the first attempt; nil: none (deleted).
		stored *task.Task
		// reqDue is the deadline the schedule was made for.
		reqDue time.Time
		now    time.Time
		// failExpireWrite makes the conditional write fail with errDB.
		failExpireWrite bool
		// notifyLease is the Service option (0: the default).
		notifyLease  time.Duration
		attempts     []expireAttempt
		wantSent     int
		wantStatus   task.Status // "" when the task should not exist
		wantNotified bool
	}{
		{
			name:   "first attempt expires and notifies",
			stored: &pending, reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{{want: task.Expired}},
			wantSent: 1, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			name:   "retry after a successful publish does not publish again",
			stored: &pending, reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{{want: task.Expired}, {want: task.Skipped}, {want: task.Skipped}},
			wantSent: 1, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			name:   "retry after a failed publish publishes exactly once more",
			stored: &pending, reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{
				{failPublish: true, wantErr: errSNS},
				{after: lease, want: task.Renotified},
				{after: 2 * lease, want: task.Skipped},
			},
			wantSent: 1, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			name:   "publish failing twice, then succeeding",
			stored: &pending, reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{
				{failPublish: true, wantErr: errSNS},
				{after: lease, failPublish: true, wantErr: errSNS},
				{after: 2 * lease, want: task.Renotified},
				{after: 3 * lease, want: task.Skipped},
			},
			wantSent: 1, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			// The claim of the failed attempt has not lapsed: it may be
			// publishing still. Retry later, never skip.
			name:   "retry within the lease waits for the claim, then publishes",
			stored: &pending, reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{
				{failPublish: true, wantErr: errSNS},
				{after: time.Second, wantErr: task.ErrNotifyInProgress},
				{after: lease - time.Second, wantErr: task.ErrNotifyInProgress},
				{after: lease, want: task.Renotified},
			},
			wantSent: 1, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			name:   "a concurrent invocation does not publish while the first one does",
			stored: &pending, reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{
				{concurrent: true, concurrentErr: task.ErrNotifyInProgress, want: task.Expired},
				{after: lease, want: task.Skipped},
			},
			wantSent: 1, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			name:   "a concurrent invocation does not publish while a retry does",
			stored: &pending, reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{
				{failPublish: true, wantErr: errSNS},
				{after: lease, concurrent: true, concurrentErr: task.ErrNotifyInProgress, want: task.Renotified},
			},
			wantSent: 1, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			name: "the first attempt crashed before publishing: a retry after the lease publishes",
			stored: with(func(t *task.Task) {
				t.Status, t.ExpiredAt, t.NotifyClaimAt = task.StatusExpired, expireDue, expireDue
			}),
			reqDue: expireDue, now: expireDue.Add(lease),
			attempts: []expireAttempt{{want: task.Renotified}, {want: task.Skipped}},
			wantSent: 1, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			name:   "store error while claiming: an error for a retry, nothing sent",
			stored: &pending, reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{
				{failPublish: true, wantErr: errSNS},
				{after: lease, failClaim: true, wantErr: errDB},
				{after: 2 * lease, want: task.Renotified},
			},
			wantSent: 1, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			// The one duplicate window: published, not recorded, retried.
			name:   "crash after publish, before MarkNotified: the retry publishes again",
			stored: &pending, reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{
				{failMark: true, want: task.Expired},
				{after: time.Second, wantErr: task.ErrNotifyInProgress},
				{after: lease, want: task.Renotified},
				{after: 2 * lease, want: task.Skipped},
			},
			wantSent: 2, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			name:   "stale deadline: the task was moved later",
			stored: with(func(t *task.Task) { t.DueAt = expireDue.Add(time.Hour) }), reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{{want: task.Skipped}, {want: task.Skipped}},
			wantSent: 0, wantStatus: task.StatusPending,
		},
		{
			name: "stale deadline: expired un-notified under another deadline",
			stored: with(func(t *task.Task) {
				t.Status, t.DueAt, t.ExpiredAt = task.StatusExpired, expireDue.Add(-time.Hour), expireDue.Add(-time.Hour)
			}),
			reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{{want: task.Skipped}},
			wantSent: 0, wantStatus: task.StatusExpired,
		},
		{
			name:   "completed task is skipped",
			stored: with(func(t *task.Task) { t.Status, t.CompletedAt = task.StatusDone, expireDue.Add(-time.Minute) }),
			reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{{want: task.Skipped}},
			wantSent: 0, wantStatus: task.StatusDone,
		},
		{
			name:   "deleted task is skipped",
			stored: nil, reqDue: expireDue, now: expireDue.Add(time.Second),
			attempts: []expireAttempt{{want: task.Skipped}, {want: task.Skipped}},
			wantSent: 0,
		},
		{
			name:   "a firing before the deadline is an error, retried",
			stored: &pending, reqDue: expireDue, now: expireDue.Add(-time.Second),
			attempts: []expireAttempt{{wantErr: task.ErrTooEarly}, {after: time.Minute, want: task.Expired}},
			wantSent: 1, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			name:   "deadline exactly now expires",
			stored: &pending, reqDue: expireDue, now: expireDue,
			attempts: []expireAttempt{{want: task.Expired}},
			wantSent: 1, wantStatus: task.StatusExpired, wantNotified: true,
		},
		{
			name:   "store error: nothing sent, error returned for a retry",
			stored: &pending, reqDue: expireDue, now: expireDue.Add(time.Second), failExpireWrite: true,
			attempts: []expireAttempt{{wantErr: errDB}},
			wantSent: 0, wantStatus: task.StatusPending,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.NewStore()
			if tc.stored != nil {
				store.Put(*tc.stored)
			}
			outbox := &memory.Outbox{}
			var a expireAttempt
			var svc todo
			req := task.ExpireRequest{UserID: pending.UserID, TaskID: pending.TaskID, DueAt: tc.reqDue}
			nested := false
			outbox.Fail = func(task.Notification) error {
				if a.concurrent && !nested {
					// The second invocation runs while the first publishes.
					nested = true
					got, err := svc.Expire(context.Background(), req)
					if !errors.Is(err, a.concurrentErr) || got != a.concurrentOut {
						t.Errorf("concurrent invocation: %q, %v; want %q, %v", got, err, a.concurrentOut, a.concurrentErr)
					}
				}
				if a.failPublish {
					return errSNS
				}
				return nil
			}
			store.Fail = func(op string) error {
				if (op == "MarkNotified" && a.failMark) || (op == "ClaimNotification" && a.failClaim) ||
					(op == "Expire" && tc.failExpireWrite) {
					return errDB
				}
				return nil
			}
			clock := &expireClock{tc.now}
			var err error
			svc, err = newTodo(task.Deps{Store: store, Clock: clock, Log: slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil))},
				task.InProcessConfig{Notifier: outbox, Lease: tc.notifyLease, WebURL: "https://app.example.com/"})
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.attempts {
				a, nested = tc.attempts[i], false
				clock.t = tc.now.Add(a.after)
				got, err := svc.Expire(context.Background(), req)
				if !errors.Is(err, a.wantErr) || (err == nil) != (a.wantErr == nil) {
					t.Fatalf("attempt %d: error %v, want %v", i+1, err, a.wantErr)
				}
				if got != a.want {
					t.Fatalf("attempt %d: outcome %q, want %q", i+1, got, a.want)
				}
				if a.concurrent && !nested {
					t.Fatalf("attempt %d did not publish, so no concurrent invocation ran", i+1)
				}
			}
			if n := outbox.SentFor(pending.TaskID); n != tc.wantSent {
				t.Fatalf("%d notifications sent, want %d", n, tc.wantSent)
			}
			for _, n := range outbox.Sent() {
				want := task.Notification{UserID: pending.UserID, TaskID: pending.TaskID, Title: pending.Title,
					DueAt: expireDue, Link: "https://app.example.com/#/tasks/" + pending.TaskID}
				if n != want {
					t.Fatalf("notification %+v, want %+v", n, want)
				}
			}
			got, err := store.Get(context.Background(), pending.UserID, pending.TaskID)
			if tc.wantStatus == "" {
				if !errors.Is(err, task.ErrNotFound) {
					t.Fatalf("task exists: %+v, %v", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tc.wantStatus || got.NotifiedAt.IsZero() == tc.wantNotified {
				t.Fatalf("task status %s notifiedAt %v; want %s, notified %t", got.Status, got.NotifiedAt, tc.wantStatus, tc.wantNotified)
			}
		})
	}
}
