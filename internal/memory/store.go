// Package memory holds in-process adapters for the task ports: a store
// with a change feed, a scheduler and a notifier outbox. Tests, the
// simulation and `make dev` run the real handler code on them.
package memory

import (
	"context"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/domain/task"
)

// Store is a task.Store in memory. Every write appends to a change feed,
// like a DynamoDB stream with NEW_AND_OLD_IMAGES.
type Store struct {
	mu      sync.Mutex
	items   map[key]task.Task
	pending pendingIndex
	changes []task.Change
	seq     int
	// Fail, when set, is called before each operation; a non-nil error is
	// returned instead of doing it (fault injection).
	Fail func(op string) error
}

type key struct{ user, id string }

var _ task.Store = (*Store)(nil)

// NewStore returns an empty store.
func NewStore() *Store { return &Store{items: map[key]task.Task{}, pending: newPendingIndex()} }

func (s *Store) fail(op string) error {
	if s.Fail == nil {
		return nil
	}
	return s.Fail(op)
}

// record appends a change; the caller holds mu.
func (s *Store) record(kind task.ChangeKind, old, new *task.Task) {
	s.seq++
	k := old
	if k == nil {
		k = new
	}
	s.changes = append(s.changes, task.Change{EventID: fmt.Sprintf("ev-%08d", s.seq), Kind: kind,
		Key: task.Key(k.UserID, k.TaskID), Old: image(old), New: image(new)})
}

// Changes returns the change feed from position from on, and the next
// position to read from.
func (s *Store) Changes(from int) ([]task.Change, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if from > len(s.changes) {
		from = len(s.changes)
	}
	out := append([]task.Change(nil), s.changes[from:]...)
	return out, len(s.changes)
}

// All returns every task, ordered by user then id.
func (s *Store) All() []task.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]task.Task, 0, len(s.items))
	for _, t := range s.items {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].UserID != out[j].UserID {
			return out[i].UserID < out[j].UserID
		}
		return out[i].TaskID < out[j].TaskID
	})
	return out
}

// Put writes t as is (test setup and restoring saved state); no change is
// recorded.
func (s *Store) Put(t task.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.put(key{t.UserID, t.TaskID}, t)
}

func ptr(t task.Task) *task.Task { return &t }

// image is a task as the change feed shows it: the contract's view of
// the item (nil for none).
func image(t *task.Task) *contract.Item {
	if t == nil {
		return nil
	}
	it := t.Item()
	return &it
}

// PutItem writes t as a writer that is not the API would, with a plain
// put (no condition, no schedule made): the change feed records it, as an
// INSERT or a MODIFY of what was there.
func (s *Store) PutItem(t task.Task) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{t.UserID, t.TaskID}
	if old, ok := s.items[k]; ok {
		s.put(k, t)
		s.record(task.ChangeModify, ptr(old), ptr(t))
		return
	}
	s.put(k, t)
	s.record(task.ChangeInsert, nil, ptr(t))
}

// Create implements task.Store.
func (s *Store) Create(_ context.Context, t task.Task) error {
	if err := s.fail("Create"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{t.UserID, t.TaskID}
	if _, ok := s.items[k]; ok {
		return task.ErrAlreadyExists
	}
	s.put(k, t)
	s.record(task.ChangeInsert, nil, ptr(t))
	return nil
}

// Get implements task.Store.
func (s *Store) Get(_ context.Context, userID, taskID string) (task.Task, error) {
	if err := s.fail("Get"); err != nil {
		return task.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.items[key{userID, taskID}]
	if !ok {
		return task.Task{}, task.ErrNotFound
	}
	return t, nil
}

// List implements task.Store. The cursor is the last id returned.
func (s *Store) List(_ context.Context, userID string, page task.PageRequest) (task.Page, error) {
	if err := s.fail("List"); err != nil {
		return task.Page{}, err
	}
	after := ""
	if page.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(page.Cursor)
		if err != nil || !task.ValidID(string(b)) {
			return task.Page{}, task.ErrBadCursor
		}
		after = string(b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []task.Task
	for k, t := range s.items {
		if k.user == userID && k.id > after {
			mine = append(mine, t)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].TaskID < mine[j].TaskID })
	limit := page.Limit
	if limit <= 0 {
		limit = task.DefaultPageSize
	}
	if limit > task.MaxPageSize {
		limit = task.MaxPageSize
	}
	var p task.Page
	if len(mine) > limit {
		mine = mine[:limit]
		p.Cursor = base64.RawURLEncoding.EncodeToString([]byte(mine[limit-1].TaskID))
	}
	p.Tasks = mine
	return p, nil
}

// CountUserPending implements task.Store: exact, under the store's lock.
func (s *Store) CountUserPending(_ context.Context, userID string, limit int) (int, error) {
	if err := s.fail("CountUserPending"); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, t := range s.items {
		if k.user == userID && t.Status == task.StatusPending {
			n++
		}
	}
	if limit > 0 && n > limit {
		n = limit
	}
	return n, nil
}

// UpdatePending implements task.Store.
func (s *Store) UpdatePending(_ context.Context, userID, taskID string, p task.Patch, now time.Time) (task.Task, error) {
	if err := s.fail("UpdatePending"); err != nil {
		return task.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok {
		return task.Task{}, task.ErrNotFound
	}
	if old.Status != task.StatusPending {
		return task.Task{}, &task.NotPendingError{Status: old.Status}
	}
	if !task.BasisHolds(old, p) {
		return task.Task{}, task.ErrConditionFailed
	}
	t := task.ApplyPatch(old, p, now)
	s.put(k, t)
	s.record(task.ChangeModify, ptr(old), ptr(t))
	return t, nil
}

// Delete implements task.Store.
func (s *Store) Delete(_ context.Context, userID, taskID string) (task.Task, error) {
	if err := s.fail("Delete"); err != nil {
		return task.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok {
		return task.Task{}, task.ErrNotFound
	}
	s.remove(k)
	s.record(task.ChangeRemove, ptr(old), nil)
	return old, nil
}

// Expire implements task.Store.
func (s *Store) Expire(_ context.Context, userID, taskID string, dueAt, now time.Time) (task.Task, error) {
	if err := s.fail("Expire"); err != nil {
		return task.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok || !task.Schema.Claimable(old.Item(), dueAt) {
		return task.Task{}, task.ErrConditionFailed
	}
	t := old
	t.Status = task.StatusExpired
	t.ExpiredAt = now
	t.UpdatedAt = now
	t.NotifyClaimAt = now
	s.put(k, t)
	s.record(task.ChangeModify, ptr(old), ptr(t))
	return t, nil
}

// ClaimNotification implements task.Store.
func (s *Store) ClaimNotification(_ context.Context, userID, taskID string, dueAt, now time.Time, lease time.Duration) error {
	if err := s.fail("ClaimNotification"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok || !task.Schema.TakeOverable(old.Item(), dueAt, now, lease) {
		return task.ErrConditionFailed
	}
	t := old
	t.NotifyClaimAt = now
	s.put(k, t)
	s.record(task.ChangeModify, ptr(old), ptr(t))
	return nil
}

// MarkNotified implements task.Store.
func (s *Store) MarkNotified(_ context.Context, userID, taskID string, at time.Time) error {
	if err := s.fail("MarkNotified"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok || !task.Schema.Markable(old.Item()) {
		return task.ErrConditionFailed
	}
	t := old
	t.NotifiedAt = at
	s.put(k, t)
	s.record(task.ChangeModify, ptr(old), ptr(t))
	return nil
}

// ClaimReminder implements task.Store.
func (s *Store) ClaimReminder(_ context.Context, userID, taskID string, dueAt, remindAt, now time.Time, lease time.Duration) (task.Task, error) {
	if err := s.fail("ClaimReminder"); err != nil {
		return task.Task{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok || !task.Schema.RemindClaimable(old.Item(), dueAt, remindAt, now, lease) {
		return task.Task{}, task.ErrConditionFailed
	}
	t := old
	t.RemindClaimAt = now.UTC().Truncate(time.Second)
	s.put(k, t)
	s.record(task.ChangeModify, ptr(old), ptr(t))
	return t, nil
}

// MarkReminded implements task.Store.
func (s *Store) MarkReminded(_ context.Context, userID, taskID string, remindAt time.Time) error {
	if err := s.fail("MarkReminded"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok || !task.Schema.RemindMarkable(old.Item(), remindAt) {
		return task.ErrConditionFailed
	}
	t := old
	t.RemindedFor = remindAt.UTC().Truncate(time.Second)
	s.put(k, t)
	s.record(task.ChangeModify, ptr(old), ptr(t))
	return nil
}

// SetScheduleRepair implements task.Store.
func (s *Store) SetScheduleRepair(_ context.Context, userID, taskID string, repair bool) error {
	if err := s.fail("SetScheduleRepair"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok {
		return task.ErrNotFound
	}
	t := old
	t.ScheduleRepair = repair
	s.put(k, t)
	s.record(task.ChangeModify, ptr(old), ptr(t))
	return nil
}

// MarkScheduled implements task.Store.
func (s *Store) MarkScheduled(_ context.Context, userID, taskID string, dueAt time.Time) error {
	if err := s.fail("MarkScheduled"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := key{userID, taskID}
	old, ok := s.items[k]
	if !ok || old.Status != task.StatusPending || !old.DueAt.Equal(dueAt) {
		return task.ErrConditionFailed
	}
	t := old
	t.ScheduledFor, t.ScheduleRepair = dueAt, false
	s.put(k, t)
	s.record(task.ChangeModify, ptr(old), ptr(t))
	return nil
}

// String describes the store's size, for logs.
func (s *Store) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return "memory.Store{" + strconv.Itoa(len(s.items)) + " tasks, " + strconv.Itoa(len(s.changes)) + " changes}"
}
