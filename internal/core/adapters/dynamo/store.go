// Package dynamo is the DynamoDB adapter of the tables: the task store
// (task.Store and task.PendingLister over the table that tableschema
// describes), the item store of any contract.Schema, the campaign table
// (CampaignStore: campaigns, send tasks, checkpoints; layout:
// internal/campaigns/tablekeys), and the decoders of their stream records.
// They share one client interface (API), the mapping of a refused
// condition, the attribute helpers and Query paging.
package dynamo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// API is the part of the DynamoDB client the stores use (the task
// table's Store and the campaign table's CampaignStore).
type API interface {
	ItemAPI
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// onTable is a client on one table: what every store here is made of.
type onTable struct {
	api   API
	table string
}

// Store is a task.Store and task.PendingLister on one DynamoDB table.
type Store struct{ onTable }

var (
	_ task.Store         = (*Store)(nil)
	_ task.PendingLister = (*Store)(nil)
)

// New returns a store on the named table.
func New(api API, name string) *Store { return &Store{onTable{api, name}} }

// Create implements task.Store: a put that fails with ErrAlreadyExists
// when the key is taken.
func (s *Store) Create(ctx context.Context, t task.Task) error {
	e := newExpr()
	_, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(s.table),
		Item:                     toAttrs(tableschema.ToItem(t)),
		ConditionExpression:      aws.String("attribute_not_exists(" + e.name(tableschema.SortKey) + ")"),
		ExpressionAttributeNames: e.names,
	})
	if err != nil {
		return fmt.Errorf("create task %s: %w", t.TaskID, conditionAs(err, task.ErrAlreadyExists))
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
	e := newExpr()
	// From the first task id on: the user's items under reserved sort keys
	// (their notification settings) sort before it and are never listed.
	cond := e.name(tableschema.PartitionKey) + " = " + e.value(userID) + " AND " +
		e.name(tableschema.SortKey) + " >= " + e.value(tableschema.FirstTaskID)
	// One more than the page, to tell whether another page follows.
	out, err := s.api.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
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
	tasks, err := decodeAll(items, decode)
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
	e := newExpr()
	cond := e.name(tableschema.PartitionKey) + " = " + e.value(userID)
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(tableschema.UserPendingIndex),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
		Select:                    types.SelectCount,
		ConsistentRead:            aws.Bool(true),
	}
	n := 0
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	err := queryPages(ctx, s.api, in, func(out *dynamodb.QueryOutput) (bool, error) {
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

// queryPages runs the Query in page after page (each reads up to 1 MB),
// handing each to page, until the last one or until page returns false;
// page may change in (its Limit) for the next.
func queryPages(ctx context.Context, api API, in *dynamodb.QueryInput, page func(*dynamodb.QueryOutput) (bool, error)) error {
	for {
		out, err := api.Query(ctx, in)
		if err != nil {
			return err
		}
		more, err := page(out)
		if err != nil || !more || out.LastEvaluatedKey == nil {
			return err
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
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
	if isConditionFailed(err) {
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
	e := newExpr()
	cond := "attribute_exists(" + e.name(tableschema.SortKey) + ") AND " +
		e.name(tableschema.AttrStatus) + " = " + e.value(string(task.StatusPending))
	if p.Title != nil {
		e.set(tableschema.AttrTitle, *p.Title)
	}
	if p.Description != nil {
		// An empty description is an absent attribute, as ToItem writes it.
		e.setOrRemove(tableschema.AttrDescription, *p.Description)
	}
	if p.DueAt != nil {
		e.set(tableschema.AttrDueAt, task.FormatTime(*p.DueAt))
		e.remove(tableschema.AttrScheduledFor) // as task.ApplyPatch
	}
	if p.Reminder != nil {
		e.set(tableschema.AttrReminder, string(*p.Reminder))
	}
	if b := p.Basis; b != nil {
		// The reminder time was computed from what the task had: only
		// while it still has it (task.BasisHolds).
		cond += " AND " + e.name(tableschema.AttrDueAt) + " = " + e.value(basisDue)
		if b.Reminder == "" {
			cond += " AND attribute_not_exists(" + e.name(tableschema.AttrReminder) + ")"
		} else {
			cond += " AND " + e.name(tableschema.AttrReminder) + " = " + e.value(string(b.Reminder))
		}
		e.setOrRemove(tableschema.AttrRemindAt, task.FormatTime(b.RemindAt))
		if !b.RemindAt.IsZero() && !b.RemindAt.After(now) {
			e.set(tableschema.AttrRemindedFor, task.FormatTime(b.RemindAt)) // passed when written: done (as task.ApplyPatch)
		}
		e.remove(tableschema.AttrRemindClaimAt) // as task.ApplyPatch
		if p.DueAt == nil {
			e.remove(tableschema.AttrScheduledFor) // as task.ApplyPatch
		}
	}
	if p.Complete {
		e.set(tableschema.AttrStatus, string(task.StatusDone))
		e.set(tableschema.AttrCompletedAt, task.FormatTime(now))
		e.remove(tableschema.PendingShardAttr) // leaves the pending index
		e.remove(tableschema.UserPendingAttr)  // and the user's count
	}
	e.set(tableschema.AttrUpdatedAt, task.FormatTime(now))
	return e.update(table, key(userID, taskID), cond)
}

// Delete implements task.Store: a conditional delete that returns the old
// item.
func (s *Store) Delete(ctx context.Context, userID, taskID string) (task.Task, error) {
	e := newExpr()
	out, err := s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:                aws.String(s.table),
		Key:                      key(userID, taskID),
		ConditionExpression:      aws.String("attribute_exists(" + e.name(tableschema.SortKey) + ")"),
		ExpressionAttributeNames: e.names,
		ReturnValues:             types.ReturnValueAllOld,
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("delete task %s: %w", taskID, conditionAs(err, task.ErrNotFound))
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
		out, err = s.api.UpdateItem(ctx, UpdateInput(s.table, u, types.ReturnValueAllNew))
		return err
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("expire task %s: %w", taskID, conditionAs(err, task.ErrConditionFailed))
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
		_, err := s.api.UpdateItem(ctx, UpdateInput(s.table, u, types.ReturnValueNone))
		return err
	})
	if err != nil {
		return fmt.Errorf("claim notification of task %s: %w", taskID, conditionAs(err, task.ErrConditionFailed))
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
	_, err := s.api.UpdateItem(ctx, UpdateInput(s.table, u, types.ReturnValueNone))
	if err != nil {
		return fmt.Errorf("mark task %s notified: %w", taskID, conditionAs(err, task.ErrConditionFailed))
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
		out, err = s.api.UpdateItem(ctx, UpdateInput(s.table, u, types.ReturnValueAllNew))
		return err
	})
	if err != nil {
		return task.Task{}, fmt.Errorf("claim reminder of task %s: %w", taskID, conditionAs(err, task.ErrConditionFailed))
	}
	return decode(out.Attributes)
}

// MarkReminded implements task.Store with contract.Schema.MarkReminded.
func (s *Store) MarkReminded(ctx context.Context, userID, taskID string, remindAt time.Time) error {
	u := task.Schema.MarkReminded(task.Key(userID, taskID), remindAt)
	_, err := s.api.UpdateItem(ctx, UpdateInput(s.table, u, types.ReturnValueNone))
	if err != nil {
		return fmt.Errorf("mark task %s reminded: %w", taskID, conditionAs(err, task.ErrConditionFailed))
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
	return contract.AsStored(due, remind, write, isConditionFailed, func() (contract.Item, bool, error) {
		out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(s.table), Key: key(userID, taskID), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return contract.Item{}, false, err
		}
		if len(out.Item) == 0 {
			return contract.Item{}, false, nil
		}
		it, err := task.Schema.ItemFrom(fromAttrs(out.Item))
		return it, err == nil, err
	})
}

// UpdateInput renders one of the contract's conditional writes as an
// UpdateItem: every key and value a string (S).
func UpdateInput(table string, u contract.Update, ret types.ReturnValue) *dynamodb.UpdateItemInput {
	in := &dynamodb.UpdateItemInput{
		TableName:                aws.String(table),
		Key:                      toAttrs(u.Key),
		UpdateExpression:         aws.String(u.UpdateExpression),
		ConditionExpression:      aws.String(u.ConditionExpression),
		ExpressionAttributeNames: u.Names,
		ReturnValues:             ret,
	}
	if len(u.Values) > 0 {
		in.ExpressionAttributeValues = toAttrs(u.Values)
	}
	return in
}

// SetScheduleRepair implements task.Store.
func (s *Store) SetScheduleRepair(ctx context.Context, userID, taskID string, repair bool) error {
	e := newExpr()
	cond := "attribute_exists(" + e.name(tableschema.SortKey) + ")"
	if repair {
		e.set(tableschema.AttrScheduleRepair, "true")
	} else {
		e.remove(tableschema.AttrScheduleRepair)
	}
	_, err := s.api.UpdateItem(ctx, e.update(s.table, key(userID, taskID), cond))
	if err != nil {
		return fmt.Errorf("set schedule repair of task %s: %w", taskID, conditionAs(err, task.ErrNotFound))
	}
	return nil
}

// MarkScheduled implements task.Store: one conditional UpdateItem (still
// Pending, same deadline, compared as stored: asStored).
func (s *Store) MarkScheduled(ctx context.Context, userID, taskID string, dueAt time.Time) error {
	err := s.asStored(ctx, userID, taskID, dueAt, time.Time{}, func(sp contract.Spelling) error {
		e := newExpr()
		cond := e.name(tableschema.AttrStatus) + " = " + e.value(string(task.StatusPending)) + " AND " +
			e.name(tableschema.AttrDueAt) + " = " + e.value(sp.Due)
		e.set(tableschema.AttrScheduledFor, task.FormatTime(dueAt))
		e.remove(tableschema.AttrScheduleRepair)
		_, err := s.api.UpdateItem(ctx, e.update(s.table, key(userID, taskID), cond))
		return err
	})
	if err != nil {
		return fmt.Errorf("mark task %s scheduled: %w", taskID, conditionAs(err, task.ErrConditionFailed))
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
		tasks, err := decodeAll(out.Items, decode)
		if err != nil {
			return task.Page{}, err
		}
		p.Tasks = append(p.Tasks, tasks...)
		if out.LastEvaluatedKey != nil {
			c.Key = fromAttrs(out.LastEvaluatedKey)
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
	e := newExpr()
	cond := e.name(tableschema.PendingShardAttr) + " = " + e.value(strconv.Itoa(c.Shard))
	if !dueBy.IsZero() {
		cond += " AND " + e.name(tableschema.PendingSortAttr) + " <= " + e.value(task.FormatTime(dueBy))
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		IndexName:                 aws.String(tableschema.PendingIndex),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  e.names,
		ExpressionAttributeValues: e.values,
	}
	if c.Key != nil {
		in.ExclusiveStartKey = toAttrs(c.Key)
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
			c.Key = fromAttrs(out.LastEvaluatedKey)
		} else {
			c = pendingCursor{Shard: c.Shard + 1}
		}
	}
	return n, nil
}

func key(userID, taskID string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		tableschema.PartitionKey: avS(userID),
		tableschema.SortKey:      avS(taskID),
	}
}

func decode(item map[string]types.AttributeValue) (task.Task, error) {
	t, err := tableschema.FromItem(fromAttrs(item))
	if err != nil {
		return task.Task{}, fmt.Errorf("decode task item: %w", err)
	}
	return t, nil
}

// expr collects the names, values and clauses of one expression. Every
// attribute name goes through a placeholder, so reserved words such as
// status never reach the expression.
type expr struct {
	names  map[string]string
	values map[string]types.AttributeValue
	sets   []string
	rems   []string
}

func newExpr() *expr {
	return &expr{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

// name returns the placeholder of an attribute name.
func (e *expr) name(attr string) string {
	for ph, a := range e.names {
		if a == attr {
			return ph
		}
	}
	ph := "#n" + strconv.Itoa(len(e.names))
	e.names[ph] = attr
	return ph
}

// value returns a fresh placeholder for a string value.
func (e *expr) value(v string) string {
	ph := ":v" + strconv.Itoa(len(e.values))
	e.values[ph] = avS(v)
	return ph
}

func (e *expr) set(attr, v string) { e.sets = append(e.sets, e.name(attr)+" = "+e.value(v)) }
func (e *expr) remove(attr string) { e.rems = append(e.rems, e.name(attr)) }

func (e *expr) setOrRemove(attr, v string) {
	if v == "" {
		e.remove(attr)
		return
	}
	e.set(attr, v)
}

// update is a conditional UpdateItem of the collected clauses that returns
// the new item.
func (e *expr) update(table string, k map[string]types.AttributeValue, cond string) *dynamodb.UpdateItemInput {
	var clauses []string
	if len(e.sets) > 0 {
		clauses = append(clauses, "SET "+strings.Join(e.sets, ", "))
	}
	if len(e.rems) > 0 {
		clauses = append(clauses, "REMOVE "+strings.Join(e.rems, ", "))
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                aws.String(table),
		Key:                      k,
		UpdateExpression:         aws.String(strings.Join(clauses, " ")),
		ConditionExpression:      aws.String(cond),
		ExpressionAttributeNames: e.names,
		ReturnValues:             types.ReturnValueAllNew,
	}
	if len(e.values) > 0 {
		in.ExpressionAttributeValues = e.values
	}
	return in
}
