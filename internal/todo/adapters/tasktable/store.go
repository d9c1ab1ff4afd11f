// Package tasktable is the DynamoDB adapter of the to-do app's task
// table (layout: internal/todo/tableschema): the task store (task.Store
// and task.PendingLister) and the users' notification settings
// (notify.SettingsStore) beside their tasks. It is built on the core's
// DynamoDB helpers (internal/core/adapters/dynamo); the expiry function
// writes the same table through the core's item store (dynamo.ItemStore).
package tasktable

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// Store is a task.Store and task.PendingLister on one DynamoDB table.
type Store struct {
	api   dynamo.API
	table string
}

var (
	_ task.Store         = (*Store)(nil)
	_ task.PendingLister = (*Store)(nil)
)

// New returns a store on the named table.
func New(api dynamo.API, name string) *Store { return &Store{api, name} }

// Create implements task.Store: a put that fails with ErrAlreadyExists
// when the key is taken.
func (s *Store) Create(ctx context.Context, t task.Task) error {
	e := dynamo.NewExpr()
	_, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(s.table),
		Item:                     dynamo.ToAttrs(tableschema.ToItem(t)),
		ConditionExpression:      aws.String("attribute_not_exists(" + e.Name(tableschema.SortKey) + ")"),
		ExpressionAttributeNames: e.Names,
	})
	if err != nil {
		return fmt.Errorf("create task %s: %w", t.TaskID, dynamo.ConditionAs(err, task.ErrAlreadyExists))
	}
	return nil
}

// Get implements task.Store with a consistent read.
func (s *Store) Get(ctx context.Context, userID, taskID string) (task.Task, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(userID, taskID), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("get task %s: %w", taskID, err)
	}
	if len(out.Item) == 0 {
		return task.Task{}, fmt.Errorf("get task %s: %w", taskID, task.ErrNotFound)
	}
	return decode(out.Item)
}

// List implements task.Store: one Query on the user's partition, oldest
// first, tasks only. The cursor is the base64url of the last task id returned; the
// partition is always userID, so no cursor reaches another user's tasks.
func (s *Store) List(ctx context.Context, userID string, page task.PageRequest) (task.Page, error) {
	var start map[string]types.AttributeValue
	if page.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(page.Cursor)
		if err != nil || !task.ValidID(string(b)) {
			return task.Page{}, task.ErrBadCursor
		}
		start = key(userID, string(b))
	}
	limit := pageLimit(page.Limit)
	e := dynamo.NewExpr()
	// From the first task id on: the user's items under reserved sort keys
	// (their notification settings) sort before it and are never listed.
	cond := e.Name(tableschema.PartitionKey) + " = " + e.Value(userID) + " AND " +
		e.Name(tableschema.SortKey) + " >= " + e.Value(tableschema.FirstTaskID)
	// One more than the page, to tell whether another page follows.
	out, err := s.api.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  e.Names,
		ExpressionAttributeValues: e.AttrValues(),
		ExclusiveStartKey:         start,
		Limit:                     aws.Int32(int32(limit + 1)),
		ScanIndexForward:          aws.Bool(true),
		ConsistentRead:            aws.Bool(true),
	})
	if err != nil {
		return task.Page{}, fmt.Errorf("list tasks: %w", err)
	}
	items := out.Items
	more := out.LastEvaluatedKey != nil
	if len(items) > limit {
		items, more = items[:limit], true
	}
	tasks, err := dynamo.DecodeAll(items, decode)
	if err != nil {
		return task.Page{}, err
	}
	var p task.Page
	if len(tasks) > 0 {
		p.Tasks = tasks
	}
	if more && len(p.Tasks) > 0 {
		p.Cursor = base64.RawURLEncoding.EncodeToString([]byte(p.Tasks[len(p.Tasks)-1].TaskID))
	}
	return p, nil
}

// CountUserPending implements task.Store: a strongly consistent Query with
// Select COUNT on the sparse local index of the user's Pending tasks
// (tableschema.UserPendingIndex). Its KEYS_ONLY entries are about 200
// bytes each (keys plus DynamoDB's per-item overhead), and with a limit
// it reads at most limit of them: about 50 read units for a user at the
// default cap of 1,000, one for a user with a dozen open tasks.
func (s *Store) CountUserPending(ctx context.Context, userID string, limit int) (int, error) {
	e := dynamo.NewExpr()
	cond := e.Name(tableschema.PartitionKey) + " = " + e.Value(userID)
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(tableschema.UserPendingIndex),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  e.Names,
		ExpressionAttributeValues: e.AttrValues(),
		Select:                    types.SelectCount,
		ConsistentRead:            aws.Bool(true),
	}
	n := 0
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	err := dynamo.QueryPages(ctx, s.api, in, func(out *dynamodb.QueryOutput) (bool, error) {
		n += int(out.Count)
		if limit > 0 {
			in.Limit = aws.Int32(int32(limit - n))
			return n < limit, nil
		}
		return true, nil
	})
	if err != nil {
		return 0, fmt.Errorf("count pending tasks: %w", err)
	}
	return n, nil
}

func pageLimit(n int) int {
	switch {
	case n <= 0:
		return task.DefaultPageSize
	case n > task.MaxPageSize:
		return task.MaxPageSize
	}
	return n
}

// UpdatePending implements task.Store as one conditional UpdateItem that
// mirrors task.ApplyPatch; a basis's due time is compared as stored
// (asStored). When the condition fails, a read tells ErrNotFound from
// ErrNotPending.
func (s *Store) UpdatePending(ctx context.Context, userID, taskID string, p task.Patch, now time.Time) (task.Task, error) {
	var basisDue time.Time
	if p.Basis != nil {
		basisDue = p.Basis.DueAt
	}
	var out *dynamodb.UpdateItemOutput
	err := s.asStored(ctx, userID, taskID, basisDue, time.Time{}, func(sp contract.Spelling) (err error) {
		out, err = s.api.UpdateItem(ctx, pendingUpdate(s.table, userID, taskID, p, sp.Due, now))
		return err
	})
	if dynamo.IsConditionFailed(err) {
		cur, gerr := s.Get(ctx, userID, taskID)
		if gerr != nil {
			return task.Task{}, fmt.Errorf("update task %s: %w", taskID, gerr)
		}
		if cur.Status == task.StatusPending {
			return task.Task{}, fmt.Errorf("update task %s: deadline or reminder changed meanwhile: %w", taskID, task.ErrConditionFailed)
		}
		return task.Task{}, fmt.Errorf("update task %s: %w", taskID, &task.NotPendingError{Status: cur.Status})
	}
	if err != nil {
		return task.Task{}, fmt.Errorf("update task %s: %w", taskID, err)
	}
	return decode(out.Attributes)
}

// pendingUpdate is UpdatePending's write, its basis's due time compared
// with basisDue (the due attribute as stored).
func pendingUpdate(table, userID, taskID string, p task.Patch, basisDue string, now time.Time) *dynamodb.UpdateItemInput {
	e := dynamo.NewExpr()
	cond := "attribute_exists(" + e.Name(tableschema.SortKey) + ") AND " +
		e.Name(tableschema.AttrStatus) + " = " + e.Value(string(task.StatusPending))
	if p.Title != nil {
		e.Set(tableschema.AttrTitle, *p.Title)
	}
	if p.Description != nil {
		// An empty description is an absent attribute, as ToItem writes it.
		e.SetOrRemove(tableschema.AttrDescription, *p.Description)
	}
	if p.DueAt != nil {
		e.Set(tableschema.AttrDueAt, task.FormatTime(*p.DueAt))
		e.Remove(tableschema.AttrScheduledFor) // as task.ApplyPatch
	}
	if p.Reminder != nil {
		e.Set(tableschema.AttrReminder, string(*p.Reminder))
	}
	if b := p.Basis; b != nil {
		// The reminder time was computed from what the task had: only
		// while it still has it (task.BasisHolds).
		cond += " AND " + e.Name(tableschema.AttrDueAt) + " = " + e.Value(basisDue)
		if b.Reminder == "" {
			cond += " AND attribute_not_exists(" + e.Name(tableschema.AttrReminder) + ")"
		} else {
			cond += " AND " + e.Name(tableschema.AttrReminder) + " = " + e.Value(string(b.Reminder))
		}
		e.SetOrRemove(tableschema.AttrRemindAt, task.FormatTime(b.RemindAt))
		if !b.RemindAt.IsZero() && !b.RemindAt.After(now) {
			e.Set(tableschema.AttrRemindedFor, task.FormatTime(b.RemindAt)) // passed when written: done (as task.ApplyPatch)
		}
		e.Remove(tableschema.AttrRemindClaimAt) // as task.ApplyPatch
		if p.DueAt == nil {
			e.Remove(tableschema.AttrScheduledFor) // as task.ApplyPatch
		}
	}
	if p.Complete {
		e.Set(tableschema.AttrStatus, string(task.StatusDone))
		e.Set(tableschema.AttrCompletedAt, task.FormatTime(now))
		e.Remove(tableschema.PendingShardAttr) // leaves the pending index
		e.Remove(tableschema.UserPendingAttr)  // and the user's count
	}
	e.Set(tableschema.AttrUpdatedAt, task.FormatTime(now))
	return e.Update(table, key(userID, taskID), cond)
}

// Delete implements task.Store: a conditional delete that returns the old
// item.
func (s *Store) Delete(ctx context.Context, userID, taskID string) (task.Task, error) {
	e := dynamo.NewExpr()
	out, err := s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                aws.String(s.table),
		Key:                      key(userID, taskID),
		ConditionExpression:      aws.String("attribute_exists(" + e.Name(tableschema.SortKey) + ")"),
		ExpressionAttributeNames: e.Names,
		ReturnValues:             types.ReturnValueAllOld,
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("delete task %s: %w", taskID, dynamo.ConditionAs(err, task.ErrNotFound))
	}
	return decode(out.Attributes)
}

// Expire implements task.Store with the contract's claim
// (contract.Schema.Claim of task.Schema): the condition (still Pending,
// deadline unchanged) is the guarantee that a stale or late schedule
// never expires a task. The write takes the notification claim, and the
// task keeps its pending-index shard until MarkNotified: an expiry whose
// publish fails stays visible to the reconciler.
func (s *Store) Expire(ctx context.Context, userID, taskID string, dueAt, now time.Time) (task.Task, error) {
	var out *dynamodb.UpdateItemOutput
	err := s.asStored(ctx, userID, taskID, dueAt, time.Time{}, func(sp contract.Spelling) (err error) {
		u := task.Schema.Claim(task.Key(userID, taskID), sp.Due, now, contract.ClaimOptions{
			AlsoSet: map[string]string{
				tableschema.AttrUpdatedAt:    task.FormatTime(now),
				tableschema.PendingShardAttr: tableschema.PendingShard(taskID),
			},
			AlsoRemove: []string{tableschema.UserPendingAttr}, // no longer counts against the cap
		})
		out, err = s.api.UpdateItem(ctx, dynamo.UpdateInput(s.table, u, types.ReturnValueAllNew))
		return err
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("expire task %s: %w", taskID, dynamo.ConditionAs(err, task.ErrConditionFailed))
	}
	return decode(out.Attributes)
}

// ClaimNotification implements task.Store with the contract's take-over
// (contract.Schema.TakeOver): Expired for dueAt, not notified, and no
// claim or one at least lease old. The claim time is the library's, a
// fixed-width UTC string, so comparing the strings compares the instants;
// the due time is compared as stored (asStored).
func (s *Store) ClaimNotification(ctx context.Context, userID, taskID string, dueAt, now time.Time, lease time.Duration) error {
	err := s.asStored(ctx, userID, taskID, dueAt, time.Time{}, func(sp contract.Spelling) error {
		u := task.Schema.TakeOver(task.Key(userID, taskID), sp.Due, now, lease)
		_, err := s.api.UpdateItem(ctx, dynamo.UpdateInput(s.table, u, types.ReturnValueNone))
		return err
	})
	if err != nil {
		return fmt.Errorf("claim notification of task %s: %w", taskID, dynamo.ConditionAs(err, task.ErrConditionFailed))
	}
	return nil
}

// MarkNotified implements task.Store with contract.Schema.MarkDelivered.
// Recording the notification takes the task out of the pending index.
func (s *Store) MarkNotified(ctx context.Context, userID, taskID string, at time.Time) error {
	u := task.Schema.MarkDelivered(task.Key(userID, taskID), at, contract.ClaimOptions{
		// UserPendingAttr too: the expiry function's claim is the
		// contract's (dynamo.ItemStore), which leaves it; the notify
		// target records the notification with this write.
		AlsoRemove: []string{tableschema.PendingShardAttr, tableschema.UserPendingAttr},
	})
	_, err := s.api.UpdateItem(ctx, dynamo.UpdateInput(s.table, u, types.ReturnValueNone))
	if err != nil {
		return fmt.Errorf("mark task %s notified: %w", taskID, dynamo.ConditionAs(err, task.ErrConditionFailed))
	}
	return nil
}

// ClaimReminder implements task.Store with the contract's reminder claim
// (contract.Schema.RemindClaim), both times compared as stored
// (asStored): the task stays Pending.
func (s *Store) ClaimReminder(ctx context.Context, userID, taskID string, dueAt, remindAt, now time.Time, lease time.Duration) (task.Task, error) {
	var out *dynamodb.UpdateItemOutput
	err := s.asStored(ctx, userID, taskID, dueAt, remindAt, func(sp contract.Spelling) (err error) {
		u := task.Schema.RemindClaim(task.Key(userID, taskID), sp, now, lease)
		out, err = s.api.UpdateItem(ctx, dynamo.UpdateInput(s.table, u, types.ReturnValueAllNew))
		return err
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("claim reminder of task %s: %w", taskID, dynamo.ConditionAs(err, task.ErrConditionFailed))
	}
	return decode(out.Attributes)
}

// MarkReminded implements task.Store with contract.Schema.MarkReminded.
func (s *Store) MarkReminded(ctx context.Context, userID, taskID string, remindAt time.Time) error {
	u := task.Schema.MarkReminded(task.Key(userID, taskID), remindAt)
	_, err := s.api.UpdateItem(ctx, dynamo.UpdateInput(s.table, u, types.ReturnValueNone))
	if err != nil {
		return fmt.Errorf("mark task %s reminded: %w", taskID, dynamo.ConditionAs(err, task.ErrConditionFailed))
	}
	return nil
}

// asStored runs write, a conditional write of the item at userID/taskID
// whose condition compares the due attribute (and the reminder time when
// remind is set) as stored: contract.AsStored, which reads the item
// again with a consistent GetItem when the canonical spelling fails. A
// task written by another service may spell its due time
// "2026-12-01T09:00:00+01:00"; DynamoDB compares strings.
func (s *Store) asStored(ctx context.Context, userID, taskID string, due, remind time.Time, write func(contract.Spelling) error) error {
	return contract.AsStored(due, remind, write, dynamo.IsConditionFailed, func() (contract.Item, bool, error) {
		out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.table), Key: key(userID, taskID), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return contract.Item{}, false, err
		}
		if len(out.Item) == 0 {
			return contract.Item{}, false, nil
		}
		it, err := task.Schema.ItemFrom(dynamo.FromAttrs(out.Item))
		return it, err == nil, err
	})
}

// SetScheduleRepair implements task.Store.
func (s *Store) SetScheduleRepair(ctx context.Context, userID, taskID string, repair bool) error {
	e := dynamo.NewExpr()
	cond := "attribute_exists(" + e.Name(tableschema.SortKey) + ")"
	if repair {
		e.Set(tableschema.AttrScheduleRepair, "true")
	} else {
		e.Remove(tableschema.AttrScheduleRepair)
	}
	_, err := s.api.UpdateItem(ctx, e.Update(s.table, key(userID, taskID), cond))
	if err != nil {
		return fmt.Errorf("set schedule repair of task %s: %w", taskID, dynamo.ConditionAs(err, task.ErrNotFound))
	}
	return nil
}

// MarkScheduled implements task.Store: one conditional UpdateItem (still
// Pending, same deadline, compared as stored: asStored).
func (s *Store) MarkScheduled(ctx context.Context, userID, taskID string, dueAt time.Time) error {
	err := s.asStored(ctx, userID, taskID, dueAt, time.Time{}, func(sp contract.Spelling) error {
		e := dynamo.NewExpr()
		cond := e.Name(tableschema.AttrStatus) + " = " + e.Value(string(task.StatusPending)) + " AND " +
			e.Name(tableschema.AttrDueAt) + " = " + e.Value(sp.Due)
		e.Set(tableschema.AttrScheduledFor, task.FormatTime(dueAt))
		e.Remove(tableschema.AttrScheduleRepair)
		_, err := s.api.UpdateItem(ctx, e.Update(s.table, key(userID, taskID), cond))
		return err
	})
	if err != nil {
		return fmt.Errorf("mark task %s scheduled: %w", taskID, dynamo.ConditionAs(err, task.ErrConditionFailed))
	}
	return nil
}

// pendingCursor is where ListPending stopped: a shard of the pending
// index, and the key to go on after within it (nil: the shard's start).
type pendingCursor struct {
	Shard int               `json:"s"`
	Key   map[string]string `json:"k,omitempty"`
}

// pendingKeyAttrs are the attributes of a pending index key.
var pendingKeyAttrs = map[string]bool{
	tableschema.PartitionKey: true, tableschema.SortKey: true,
	tableschema.PendingShardAttr: true, tableschema.PendingSortAttr: true,
}

func encodePendingCursor(c pendingCursor) string {
	b, _ := json.Marshal(c) // ints and strings always marshal
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodePendingCursor(s string) (pendingCursor, error) {
	if s == "" {
		return pendingCursor{}, nil
	}
	var c pendingCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.Shard < 0 || c.Shard >= tableschema.PendingShards {
		return pendingCursor{}, task.ErrBadCursor
	}
	for k := range c.Key {
		if !pendingKeyAttrs[k] {
			return pendingCursor{}, task.ErrBadCursor
		}
	}
	if c.Key != nil && c.Key[tableschema.PendingShardAttr] != strconv.Itoa(c.Shard) {
		return pendingCursor{}, task.ErrBadCursor
	}
	return c, nil
}

// ListPending implements task.PendingLister: it reads the sparse pending
// index (the tasks that await expiry, see tableschema.PendingIndex) shard
// by shard ("0" to PendingShards-1), each in deadline order; with DueBy
// set, the key condition ends each shard at that deadline, so the overdue
// tasks of a large table cost as many reads as there are of them.
// A page may end early at a shard boundary, and the last page may be
// empty; the cursor is "" only when every shard has been read.
func (s *Store) ListPending(ctx context.Context, req task.PendingRequest) (task.Page, error) {
	c, err := decodePendingCursor(req.Cursor)
	if err != nil {
		return task.Page{}, err
	}
	limit := pageLimit(req.Limit)
	var p task.Page
	for c.Shard < tableschema.PendingShards {
		in := pendingQuery(s.table, c, req.DueBy)
		in.Limit = aws.Int32(int32(limit - len(p.Tasks)))
		out, err := s.api.Query(ctx, in)
		if err != nil {
			return task.Page{}, fmt.Errorf("list pending shard %d: %w", c.Shard, err)
		}
		tasks, err := dynamo.DecodeAll(out.Items, decode)
		if err != nil {
			return task.Page{}, err
		}
		p.Tasks = append(p.Tasks, tasks...)
		if out.LastEvaluatedKey != nil {
			c.Key = dynamo.FromAttrs(out.LastEvaluatedKey)
		} else {
			c = pendingCursor{Shard: c.Shard + 1}
		}
		if len(p.Tasks) >= limit {
			break
		}
	}
	if c.Shard < tableschema.PendingShards {
		p.Cursor = encodePendingCursor(c)
	}
	return p, nil
}

// pendingQuery reads shard c.Shard of the pending index after c.Key, up
// to deadline dueBy when it is set. The key condition compares dueAt as
// a string: a due time that another writer spelled with a positive
// offset ("09:00:00+01:00" for 08:00Z) is reached that much later, and
// one with a negative offset earlier (the callers re-check the instant).
func pendingQuery(table string, c pendingCursor, dueBy time.Time) *dynamodb.QueryInput {
	e := dynamo.NewExpr()
	cond := e.Name(tableschema.PendingShardAttr) + " = " + e.Value(strconv.Itoa(c.Shard))
	if !dueBy.IsZero() {
		cond += " AND " + e.Name(tableschema.PendingSortAttr) + " <= " + e.Value(task.FormatTime(dueBy))
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		IndexName:                 aws.String(tableschema.PendingIndex),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  e.Names,
		ExpressionAttributeValues: e.AttrValues(),
	}
	if c.Key != nil {
		in.ExclusiveStartKey = dynamo.ToAttrs(c.Key)
	}
	return in
}

// CountPending implements reconcile.PendingCounter: what ListPending would
// list from req.Cursor on, counted with Select COUNT (each Query reads up
// to 1 MB of the index and returns no item).
func (s *Store) CountPending(ctx context.Context, req task.PendingRequest) (int, error) {
	c, err := decodePendingCursor(req.Cursor)
	if err != nil {
		return 0, err
	}
	n := 0
	for c.Shard < tableschema.PendingShards {
		in := pendingQuery(s.table, c, req.DueBy)
		in.Select = types.SelectCount
		out, err := s.api.Query(ctx, in)
		if err != nil {
			return 0, fmt.Errorf("count pending shard %d: %w", c.Shard, err)
		}
		n += int(out.Count)
		if out.LastEvaluatedKey != nil {
			c.Key = dynamo.FromAttrs(out.LastEvaluatedKey)
		} else {
			c = pendingCursor{Shard: c.Shard + 1}
		}
	}
	return n, nil
}

func key(userID, taskID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		tableschema.PartitionKey: dynamo.S(userID),
		tableschema.SortKey:      dynamo.S(taskID),
	}
}

func decode(item map[string]types.AttributeValue) (task.Task, error) {
	t, err := tableschema.FromItem(dynamo.FromAttrs(item))
	if err != nil {
		return task.Task{}, fmt.Errorf("decode task item: %w", err)
	}
	return t, nil
}
