package memory

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/todo/tableschema"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// pendingIndex mirrors the table's sparse pending index
// (tableschema.PendingIndex): the tasks that await expiry, in
// tableschema.PendingShards partitions by tableschema.PendingShard, each
// ordered by deadline. Each shard keeps its keys sorted, re-sorted lazily
// after a write, so a listing of a large store stays cheap.
type pendingIndex struct {
	shards [tableschema.PendingShards]pendingShard
}

type pendingShard struct {
	keys   map[contract.Key]string // the due attribute as stored
	sorted []pendingKey            // nil when a write changed the shard
}

// pendingKey orders one shard: by deadline, then by table key.
type pendingKey struct {
	Due  string `json:"d"`
	User string `json:"u"`
	ID   string `json:"i"`
}

func (a pendingKey) less(b pendingKey) bool {
	if a.Due != b.Due {
		return a.Due < b.Due
	}
	if a.User != b.User {
		return a.User < b.User
	}
	return a.ID < b.ID
}

func newPendingIndex() pendingIndex {
	var ix pendingIndex
	for i := range ix.shards {
		ix.shards[i].keys = map[contract.Key]string{}
	}
	return ix
}

// note follows a write of the item attrs at k (nil: deleted), which the
// index holds while it has the shard attribute, sorted by its due
// attribute as stored, as DynamoDB's sparse index does.
func (ix *pendingIndex) note(k contract.Key, attrs map[string]string) {
	sh := &ix.shards[shardOf(k.Sort)]
	cur, in := sh.keys[k]
	due, awaits := attrs[tableschema.AttrDueAt], attrs[tableschema.PendingShardAttr] != ""
	switch {
	case awaits && (!in || cur != due):
		sh.keys[k], sh.sorted = due, nil
	case !awaits && in:
		delete(sh.keys, k)
		sh.sorted = nil
	}
}

func shardOf(taskID string) int {
	n, _ := strconv.Atoi(tableschema.PendingShard(taskID))
	return n
}

func (sh *pendingShard) order() []pendingKey {
	if sh.sorted == nil {
		sh.sorted = make([]pendingKey, 0, len(sh.keys))
		for k, due := range sh.keys {
			sh.sorted = append(sh.sorted, pendingKey{Due: due, User: k.Partition, ID: k.Sort})
		}
		sort.Slice(sh.sorted, func(i, j int) bool { return sh.sorted[i].less(sh.sorted[j]) })
	}
	return sh.sorted
}

// pendingCursor is where a listing stopped: a shard, and the last key
// returned in it (nil: the shard's start).
type pendingCursor struct {
	Shard int         `json:"s"`
	After *pendingKey `json:"a,omitempty"`
}

var _ task.PendingLister = (*Store)(nil)

// ListPending implements task.PendingLister like the DynamoDB adapter: it
// reads the pending index shard by shard, each in deadline order, and
// with DueBy set stops each shard at that deadline.
func (s *Store) ListPending(_ context.Context, req task.PendingRequest) (task.Page, error) {
	if err := s.fail("ListPending"); err != nil {
		return task.Page{}, err
	}
	limit := req.Limit
	if limit <= 0 {
		limit = task.DefaultPageSize
	}
	var p task.Page
	cursor, err := s.walkPending(req, limit, func(k pendingKey) { p.Tasks = append(p.Tasks, s.task(task.Key(k.User, k.ID))) })
	p.Cursor = cursor
	return p, err
}

// CountPending implements reconcile.PendingCounter: how many tasks
// ListPending would return from req.Cursor on, with req.DueBy.
func (s *Store) CountPending(_ context.Context, req task.PendingRequest) (int, error) {
	if err := s.fail("CountPending"); err != nil {
		return 0, err
	}
	n := 0
	_, err := s.walkPending(req, -1, func(pendingKey) { n++ })
	return n, err
}

// walkPending calls f on up to limit index keys (every key for limit < 0)
// from req's cursor on, and returns the cursor after the last.
func (s *Store) walkPending(req task.PendingRequest, limit int, f func(pendingKey)) (string, error) {
	var c pendingCursor
	if req.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.Cursor)
		if err != nil || json.Unmarshal(b, &c) != nil || c.Shard < 0 || c.Shard >= tableschema.PendingShards {
			return "", task.ErrBadCursor
		}
	}
	by := ""
	if !req.DueBy.IsZero() {
		by = task.FormatTime(req.DueBy)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	full := func() bool { return limit >= 0 && n >= limit }
	for c.Shard < tableschema.PendingShards && !full() {
		keys := s.pending.shards[c.Shard].order()
		i := 0
		if c.After != nil {
			after := *c.After
			i = sort.Search(len(keys), func(i int) bool { return after.less(keys[i]) })
		}
		for ; i < len(keys) && !full() && (by == "" || keys[i].Due <= by); i++ {
			f(keys[i])
			n++
			k := keys[i]
			c.After = &k
		}
		if full() && i < len(keys) && (by == "" || keys[i].Due <= by) {
			break
		}
		c = pendingCursor{Shard: c.Shard + 1}
	}
	if c.Shard >= tableschema.PendingShards {
		return "", nil
	}
	b, _ := json.Marshal(c) // strings and an int always marshal
	return base64.RawURLEncoding.EncodeToString(b), nil
}
