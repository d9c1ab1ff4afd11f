package todotest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/suitecheck"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// SettingsStores are the stores SettingsContract tests: the settings
// store, and the task store that shares its table (the same value for
// DynamoDB; two values for stores that keep settings apart).
type SettingsStores struct {
	Settings notify.SettingsStore
	Tasks    ContractStore
}

// SettingsContract is the behaviour every notification settings store
// must share with DynamoDB: a versioned record per user, saved only over
// the version read, and never seen as a task. newStores must return empty
// stores.
func SettingsContract(t *testing.T, newStores func(t *testing.T) SettingsStores) {
	ctx := context.Background()
	at := contractT0.Add(1500 * time.Millisecond) // sub-second: stored at whole seconds

	t.Run("no record reads as version 0 for that user", func(t *testing.T) {
		s := newStores(t)
		suitecheck.Equal(t, "loaded", suitecheck.Need(s.Settings.LoadSettings(ctx, "alice"))(t), notify.Settings{UserID: "alice"})
	})

	t.Run("save creates, then saves only over the version read", func(t *testing.T) {
		s := newStores(t)
		in := notify.Settings{UserID: "alice", Enabled: true, SubscriptionArn: "arn:aws:sns:eu-west-1:1:t-0:abc",
			Email: "alice@example.com", TimeZone: "Europe/Berlin", UpdatedAt: at}
		saved := suitecheck.Need(s.Settings.SaveSettings(ctx, in))(t)
		want := in
		want.Version, want.UpdatedAt = 1, at.Truncate(time.Second)
		suitecheck.Equal(t, "saved", saved, want)
		suitecheck.Equal(t, "loaded", suitecheck.Need(s.Settings.LoadSettings(ctx, "alice"))(t), want)

		// A second create, and a save over a stale version, both lose.
		for _, stale := range []int64{0, 2} {
			x := in
			x.Version, x.Enabled = stale, false
			suitecheck.WantErr(t, "save over version "+strconv.Itoa(int(stale)), suitecheck.ErrOf(s.Settings.SaveSettings(ctx, x)), notify.ErrSettingsConflict)
		}
		off := want
		off.Enabled, off.SubscriptionArn, off.Email, off.TimeZone = false, "", "", ""
		saved = suitecheck.Need(s.Settings.SaveSettings(ctx, off))(t)
		off.Version = 2
		suitecheck.Equal(t, "saved after turning off", saved, off)
		suitecheck.Equal(t, "loaded after turning off", suitecheck.Need(s.Settings.LoadSettings(ctx, "alice"))(t), off)
		if got, _ := s.Settings.LoadSettings(ctx, "bob"); got.Version != 0 {
			t.Fatalf("bob sees alice's record: %+v", got)
		}
	})

	t.Run("settings are never a task", func(t *testing.T) {
		s := newStores(t)
		for n := 0; n < 3; n++ {
			suitecheck.Must(t, s.Tasks.Create(ctx, ContractTask("alice", n)))
		}
		suitecheck.Need(s.Settings.SaveSettings(ctx, notify.Settings{UserID: "alice", Enabled: true, UpdatedAt: at}))(t)
		var ids []string
		cursor := ""
		for {
			p := suitecheck.Need(s.Tasks.List(ctx, "alice", task.PageRequest{Cursor: cursor, Limit: 2}))(t)
			for _, x := range p.Tasks {
				ids = append(ids, x.TaskID)
			}
			if cursor = p.Cursor; cursor == "" {
				break
			}
		}
		suitecheck.Equal(t, "alice's tasks", ids, []string{ContractID(0), ContractID(1), ContractID(2)})
		p := suitecheck.Need(s.Tasks.ListPending(ctx, task.PendingRequest{Limit: 100}))(t)
		for p.Cursor != "" && len(p.Tasks) < 3 {
			next := suitecheck.Need(s.Tasks.ListPending(ctx, task.PendingRequest{Cursor: p.Cursor, Limit: 100}))(t)
			p.Tasks, p.Cursor = append(p.Tasks, next.Tasks...), next.Cursor
		}
		if len(p.Tasks) != 3 {
			t.Fatalf("%d tasks await expiry, want 3", len(p.Tasks))
		}
	})
}
