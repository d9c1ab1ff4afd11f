package tableschema

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/todo/task"
)

func TestItemRoundTrip(t *testing.T) {
	due := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	base := task.Task{UserID: "u1", TaskID: "01JD00000000000000000000AA", Title: "t", Status: task.StatusPending,
		DueAt: due, CreatedAt: due.Add(-time.Hour), UpdatedAt: due.Add(-time.Hour), ScheduleToken: "tok"}
	confirmed := base
	confirmed.ScheduledFor = due
	done := base
	done.Status, done.CompletedAt, done.Description = task.StatusDone, due.Add(-time.Minute), "d"
	unnotified := base
	unnotified.Status, unnotified.ExpiredAt, unnotified.NotifyClaimAt = task.StatusExpired, due, due
	expired := unnotified
	expired.NotifiedAt, expired.ScheduleRepair = due.Add(time.Second), true
	for _, tc := range []struct {
		name string
		in   task.Task
		// wantPending: the item is in the pending index (the reconciler
		// lists it).
		wantPending bool
	}{
		{"pending", base, true},
		{"pending, schedule confirmed", confirmed, true},
		{"done", done, false},
		{"expired, notification not recorded", unnotified, true},
		{"expired and notified", expired, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			item := ToItem(tc.in)
			if sh, ok := item[PendingShardAttr]; ok != tc.wantPending || (ok && sh != PendingShard(tc.in.TaskID)) {
				t.Fatalf("pendingShard = %q (present %v), want present %v", sh, ok, tc.wantPending)
			}
			if got, want := item[AttrNotifyClaimAt], task.FormatTime(tc.in.NotifyClaimAt); got != want {
				t.Fatalf("notifyClaimAt = %q, want %q", got, want)
			}
			got, err := FromItem(item)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.in) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, tc.in)
			}
		})
	}
}

func TestFromItemRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		item map[string]string
	}{
		{"no key", map[string]string{AttrStatus: "Pending"}},
		{"bad status", map[string]string{PartitionKey: "u", SortKey: "t", AttrStatus: "Sleeping"}},
		{"bad time", map[string]string{PartitionKey: "u", SortKey: "t", AttrStatus: "Pending", AttrDueAt: "tomorrow"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := FromItem(tc.item); err == nil {
				t.Fatal("want an error")
			}
		})
	}
}

func TestPendingShardStableAndBounded(t *testing.T) {
	// The shard of an id must never change between releases: pinned values.
	for id, want := range map[string]string{
		"01JD00000000000000000000AA": "2", "01JD00000000000000000000AB": "15", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ": "4",
	} {
		if got := PendingShard(id); got != want {
			t.Fatalf("PendingShard(%q) = %s, want %s", id, got, want)
		}
	}
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		s := PendingShard(task.RandomIDs{}.NewToken())
		seen[s] = true
	}
	if len(seen) != PendingShards {
		t.Fatalf("1000 ids hit %d shards, want all %d", len(seen), PendingShards)
	}
}

// The task item is a contract item: Todo() reads from ToItem
// what task.Task.Item says, so the table, the stream decoder and the
// contract cannot disagree on a name.
func TestItemIsAContractItem(t *testing.T) {
	due := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	base := task.Task{UserID: "u1", TaskID: "01JD00000000000000000000AA", Title: "t", Status: task.StatusPending,
		DueAt: due, CreatedAt: due, UpdatedAt: due, ScheduleToken: "tok", ScheduleInline: true}
	fired := base
	fired.Status, fired.ExpiredAt, fired.NotifyClaimAt, fired.NotifiedAt, fired.ScheduleInline = task.StatusExpired, due, due, due, false
	for _, in := range []task.Task{base, fired} {
		got, err := Todo().ItemFrom(ToItem(in))
		if err != nil {
			t.Fatal(err)
		}
		if want := in.Item(); !reflect.DeepEqual(got, want) {
			t.Fatalf("contract item:\n got %+v\nwant %+v", got, want)
		}
	}
}

// Todo names exactly the attributes, states and prefixes that stored
// tasks and their schedules already use: a change here would make every
// stored item unreadable and every existing schedule unknown.
func TestTodoNamesStoredAttributes(t *testing.T) {
	s := Todo()
	for _, c := range []struct{ field, got, want string }{
		{"PartitionKey", s.PartitionKey, "userId"},
		{"SortKey", s.SortKey, "taskId"},
		{"DueAttr", s.DueAttr, "dueAt"},
		{"StateAttr", s.StateAttr, "status"},
		{"ArmedStates", strings.Join(s.ArmedStates, ","), "Pending"},
		{"FiredState", s.FiredState, "Expired"},
		{"TokenAttr", s.TokenAttr, "scheduleToken"},
		{"InlineAttr", s.InlineAttr, "scheduleInline"},
		{"FiredAtAttr", s.FiredAtAttr, "expiredAt"},
		{"ClaimAtAttr", s.ClaimAtAttr, "notifyClaimAt"},
		{"DeliveredAtAttr", s.DeliveredAtAttr, "notifiedAt"},
		{"ScheduleNamePrefix", s.ScheduleNamePrefix, "task-"},
		{"NameBySortKey", strconv.FormatBool(s.NameBySortKey), "true"},
		{"NoSortKey", strconv.FormatBool(s.NoSortKey), "false"},
		{"RemindAttr", s.RemindAttr, "remindAt"},
		{"RemindClaimAtAttr", s.RemindClaimAtAttr, "remindClaimAt"},
		{"RemindedAttr", s.RemindedAttr, "remindedFor"},
		{"ReservedSortKeyPrefix", s.ReservedSortKeyPrefix, ReservedPrefix},
		{"ReminderNamePrefix", s.ReminderNamePrefix, "remind-"},
	} {
		if c.got != c.want {
			t.Errorf("Todo().%s = %q, want %q (the name stored items use)", c.field, c.got, c.want)
		}
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("Todo() does not validate: %v", err)
	}
	if !reflect.DeepEqual(s, s.WithDefaults()) {
		t.Fatalf("Todo() leaves a field to contract defaults: %+v", s)
	}
	if !reflect.DeepEqual(s, task.Schema) {
		t.Fatalf("task.Schema differs from Todo():\n got %+v\nwant %+v", task.Schema, s)
	}
	if got, want := task.ScheduleName("01JD00000000000000000000AA"), "task-01JD00000000000000000000AA"; got != want {
		t.Fatalf("task.ScheduleName = %q, want %q", got, want)
	}
	if got, want := task.ReminderName("01JD00000000000000000000AA"), "remind-01JD00000000000000000000AA"; got != want {
		t.Fatalf("task.ReminderName = %q, want %q", got, want)
	}
}
