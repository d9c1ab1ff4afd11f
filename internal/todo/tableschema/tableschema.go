// Package tableschema is the one description of the task table: its key
// and index names, and how a task maps to an item. The CDK construct, the
// DynamoDB adapter and the stream decoder all use it, so they cannot drift.
//
// Every attribute is a DynamoDB string (S). A flag is the string "true"
// when set and absent otherwise; an unset time is absent.
package tableschema

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/armedindex"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// Key and index names.
const (
	// PartitionKey is the owner (the Cognito sub): a user's tasks are one
	// Query.
	PartitionKey = "userId"
	// SortKey is the task id (a ULID, so a Query returns oldest first).
	SortKey = "taskId"
	// PendingIndex is a sparse global secondary index holding only the
	// tasks whose expiry is pending (task.Task.AwaitsExpiry): Pending tasks,
	// and Expired tasks whose notification is not recorded. The reconciler
	// reads it instead of scanning the table.
	PendingIndex = "pending"
	// PendingShardAttr is the index's partition key, present only while
	// the task awaits expiry: set at create, kept by the transition to
	// Expired, removed by completion and by recording the notification.
	// It spreads those tasks over PendingShards partitions.
	PendingShardAttr = "pendingShard"
	// PendingSortAttr is the index's sort key.
	PendingSortAttr = AttrDueAt
	// PendingShards is how many index partitions the index spreads over.
	PendingShards = 16
	// UserPendingIndex is a sparse local secondary index (KEYS_ONLY)
	// holding each user's Pending tasks, and nothing else: the per-user
	// cap counts them with one strongly consistent Query that reads no
	// Done or Expired task, so its cost is bounded by the cap, not by the
	// user's history. (A local index bounds one user's items to 10 GB,
	// millions of tasks.)
	UserPendingIndex = "userPending"
	// UserPendingAttr is that index's sort key: the task id, present only
	// while the task is Pending (set at create, removed by completion and
	// by expiry).
	UserPendingAttr = "pendingTaskId"
)

// Reserved sort keys: items of the table that are not tasks. A task id is
// a ULID and starts with a digit, and every reserved sort key starts with
// '#', which sorts before every digit: a user's tasks are the sort keys
// from FirstTaskID on (the task listing's key condition), and the stream
// processor skips reserved keys (Todo's ReservedSortKeyPrefix).
const (
	// ReservedPrefix starts every reserved sort key.
	ReservedPrefix = "#"
	// FirstTaskID is at or before every task id and after every reserved
	// sort key.
	FirstTaskID = "0"
	// SettingsSortKey is the sort key of a user's notification settings
	// item (partition key: the user's sub).
	SettingsSortKey = "#settings"
)

// Attribute names of the notification settings item (notify.Settings).
const (
	AttrNotifyEnabled         = "notifyEnabled"
	AttrNotifySubscriptionArn = "subscriptionArn"
	AttrNotifyEmail           = "email"
	AttrTimeZone              = "timeZone"
	AttrSettingsVersion       = "version"
)

// Attribute names of a task item. The ones the schedule-on-write contract
// reads or writes are Todo()'s names (one source). They are the names the
// stored tasks use: changing one makes those items unreadable.
const (
	AttrTitle          = "title"
	AttrDescription    = "description"
	AttrStatus         = "status" // a DynamoDB reserved word: always alias it
	AttrDueAt          = "dueAt"
	AttrCreatedAt      = "createdAt"
	AttrUpdatedAt      = "updatedAt"
	AttrScheduleToken  = "scheduleToken"
	AttrScheduleRepair = "scheduleRepair"
	// AttrScheduleInline is "true" on a task whose schedule the API
	// created itself (task.Task.ScheduleInline): the stream path leaves
	// its insert alone.
	AttrScheduleInline = "scheduleInline"
	AttrCompletedAt    = "completedAt"
	AttrExpiredAt      = "expiredAt"
	AttrNotifiedAt     = "notifiedAt"
	AttrNotifyClaimAt  = "notifyClaimAt"
	// AttrScheduledFor is task.Task.ScheduledFor. Items written before it
	// existed lack it; the reconciler checks those like any unconfirmed
	// task, so they need no backfill.
	AttrScheduledFor = "scheduledFor"
	// AttrReminder is task.Task.Reminder ("none", "15m", "1h", "1d";
	// absent on items from before reminders, which have none).
	AttrReminder = "reminder"
	// AttrRemindAt, AttrRemindClaimAt and AttrRemindedFor are the
	// contract's reminder attributes (task.Task.RemindAt, RemindClaimAt,
	// RemindedFor).
	AttrRemindAt      = "remindAt"
	AttrRemindClaimAt = "remindClaimAt"
	AttrRemindedFor   = "remindedFor"
)

// PendingShard is the index partition of a task that awaits expiry.
func PendingShard(taskID string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(taskID))
	return strconv.Itoa(int(h.Sum32() % PendingShards))
}

// ToItem renders a task as string attributes.
func ToItem(t task.Task) map[string]string {
	m := map[string]string{
		PartitionKey:      t.UserID,
		SortKey:           t.TaskID,
		AttrTitle:         t.Title,
		AttrStatus:        string(t.Status),
		AttrDueAt:         task.FormatTime(t.DueAt),
		AttrCreatedAt:     task.FormatTime(t.CreatedAt),
		AttrUpdatedAt:     task.FormatTime(t.UpdatedAt),
		AttrScheduleToken: t.ScheduleToken,
	}
	if t.Description != "" {
		m[AttrDescription] = t.Description
	}
	if t.AwaitsExpiry() {
		m[PendingShardAttr] = PendingShard(t.TaskID)
	}
	if t.Status == task.StatusPending {
		m[UserPendingAttr] = t.TaskID
	}
	if t.ScheduleRepair {
		m[AttrScheduleRepair] = "true"
	}
	if t.ScheduleInline {
		m[AttrScheduleInline] = "true"
	}
	if t.Reminder != "" {
		m[AttrReminder] = string(t.Reminder)
	}
	for name, v := range map[string]string{
		AttrRemindAt:      task.FormatTime(t.RemindAt),
		AttrRemindClaimAt: task.FormatTime(t.RemindClaimAt),
		AttrRemindedFor:   task.FormatTime(t.RemindedFor),
		AttrCompletedAt:   task.FormatTime(t.CompletedAt),
		AttrExpiredAt:     task.FormatTime(t.ExpiredAt),
		AttrNotifiedAt:    task.FormatTime(t.NotifiedAt),
		AttrNotifyClaimAt: task.FormatTime(t.NotifyClaimAt),
		AttrScheduledFor:  task.FormatTime(t.ScheduledFor),
	} {
		if v != "" {
			m[name] = v
		}
	}
	return m
}

// FromItem reads a task from string attributes. It fails on an item that
// lacks its key, has an unknown status, or holds a malformed time.
func FromItem(m map[string]string) (task.Task, error) {
	t := task.Task{
		UserID: m[PartitionKey], TaskID: m[SortKey], Title: m[AttrTitle],
		Description: m[AttrDescription], Status: task.Status(m[AttrStatus]),
		ScheduleToken: m[AttrScheduleToken], ScheduleRepair: m[AttrScheduleRepair] == "true",
		ScheduleInline: m[AttrScheduleInline] == "true", Reminder: task.Reminder(m[AttrReminder]),
	}
	if t.UserID == "" || t.TaskID == "" {
		return task.Task{}, fmt.Errorf("item lacks %s or %s", PartitionKey, SortKey)
	}
	if !t.Status.Valid() {
		return task.Task{}, fmt.Errorf("item %s has unknown status %q", t.TaskID, m[AttrStatus])
	}
	for name, dst := range map[string]*timeField{
		AttrDueAt: {&t.DueAt}, AttrCreatedAt: {&t.CreatedAt}, AttrUpdatedAt: {&t.UpdatedAt},
		AttrCompletedAt: {&t.CompletedAt}, AttrExpiredAt: {&t.ExpiredAt}, AttrNotifiedAt: {&t.NotifiedAt},
		AttrNotifyClaimAt: {&t.NotifyClaimAt}, AttrScheduledFor: {&t.ScheduledFor},
		AttrRemindAt: {&t.RemindAt}, AttrRemindClaimAt: {&t.RemindClaimAt}, AttrRemindedFor: {&t.RemindedFor},
	} {
		v, err := task.ParseTime(m[name])
		if err != nil {
			return task.Task{}, fmt.Errorf("item %s attribute %s: %w", t.TaskID, name, err)
		}
		*dst.t = v
	}
	return t, nil
}

type timeField struct{ t *time.Time }

// The to-do app's schedule name prefixes, as Todo() names them
// (task.ScheduleName, task.ReminderName).
const (
	ScheduleNamePrefix = task.ScheduleNamePrefix
	ReminderNamePrefix = "remind-"
)

// PendingArmedIndex is the pending index as the core's reconciler reads
// it: a sharded armed index (armedindex.Spec) whose shard attribute the
// task writer sets while a task awaits expiry, with the task's confirmed
// schedule (scheduledFor), repair mark and last change recorded on it.
func PendingArmedIndex() armedindex.Spec {
	shards := make([]string, PendingShards)
	for i := range shards {
		shards[i] = strconv.Itoa(i)
	}
	return armedindex.Spec{Name: PendingIndex, PartitionAttr: PendingShardAttr, Partitions: shards,
		ConfirmedAttr: AttrScheduledFor, RepairAttr: AttrScheduleRepair, UpdatedAttr: AttrUpdatedAt}
}

// Todo is the to-do app's item schema: the attribute names, states and
// schedule name prefixes its stored items and schedules already use, all
// set explicitly (none from contract.Default, whose neutral names differ).
// The app hands it to the scheduling core like any adopter hands its own;
// task.Schema is the same value (the domain cannot import this package).
func Todo() contract.Schema {
	return contract.Schema{
		PartitionKey: PartitionKey, SortKey: SortKey, DueAttr: AttrDueAt, StateAttr: AttrStatus,
		ArmedStates: []string{string(task.StatusPending)}, FiredState: string(task.StatusExpired),
		TokenAttr: AttrScheduleToken, InlineAttr: AttrScheduleInline, FiredAtAttr: AttrExpiredAt,
		ClaimAtAttr: AttrNotifyClaimAt, DeliveredAtAttr: AttrNotifiedAt,
		ScheduleNamePrefix: ScheduleNamePrefix, NameBySortKey: true,
		RemindAttr: AttrRemindAt, RemindClaimAtAttr: AttrRemindClaimAt, RemindedAttr: AttrRemindedFor,
		ReminderNamePrefix: ReminderNamePrefix, ReservedSortKeyPrefix: ReservedPrefix,
	}
}
