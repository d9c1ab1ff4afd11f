package sim

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/inproc"
)

// stages is the core's stream path as every workload on a table runs it,
// with its faults: the table's change feed split over shards (replayed
// and redelivered batches) into the stream processor, the SQS FIFO queue
// model (rejected and unknown enqueues, lost acks, visibility timeouts,
// worker crashes) and the cancellation worker. The task workload and
// the adopters' workloads (futureevents.go, deferredjobs.go) share it;
// lossInv names the invariant its own checks report under (I4 for the
// tasks).
type stages struct {
	c       *core
	ctx     context.Context
	clock   *inproc.Clock
	lossInv string
	feed    interface {
		Changes(from int) ([]changefeed.Change, int)
	}
	// shardKey picks a change's shard (the tasks: the task id).
	shardKey func(changefeed.Change) string
	// blameKey is the key a message group's injected faults are blamed
	// under (see blame).
	blameKey func(group string) string
	// dedupID replaces the FIFO deduplication id of the n-th send (nil:
	// the message's own).
	dedupID func(m cancel.Message, n int) string
	// onHandle sees each delivery before the worker handles it (nil:
	// nothing).
	onHandle func(cancel.Delivery)

	proc      *cancel.Processor
	worker    *cancel.Worker
	queue     *inproc.Queue
	qcfg      inproc.QueueConfig
	feedPos   int
	shards    []*shard
	msgs      map[string]*msgState
	msgOrder  []string
	eventSent map[string]time.Time
	sends     int
	blamed    map[string]int
}

// newStages makes the queue and 1 to 4 shards; the caller sets the
// processor (over enqueuer{s}) and the worker.
func newStages(c *core, ctx context.Context, clock *inproc.Clock, lossInv string) stages {
	s := stages{c: c, ctx: ctx, clock: clock, lossInv: lossInv, msgs: map[string]*msgState{},
		eventSent: map[string]time.Time{}, blamed: map[string]int{}}
	s.qcfg = inproc.QueueConfig{VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5, DedupWindow: 5 * time.Minute}
	s.queue = inproc.NewQueue(clock, s.qcfg)
	return s
}

// addShards draws the stream's shard count.
func (s *stages) addShards() {
	for range 1 + s.c.rng.Intn(4) {
		s.shards = append(s.shards, &shard{})
	}
}

// blame records an injected fault against a key, so a failure of its
// queue message in the same batch is known to have a cause.
func (s *stages) blame(key string) { s.blamed[key]++ }

// The stream.

func shardOf(key string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

func (s *stages) ingest() {
	all, next := s.feed.Changes(s.feedPos)
	s.feedPos = next
	for _, c := range all {
		sh := s.shards[shardOf(s.shardKey(c), len(s.shards))]
		sh.recs = append(sh.recs, c)
	}
}

func (s *stages) streamDone() bool {
	s.ingest()
	for _, sh := range s.shards {
		if sh.pos < len(sh.recs) {
			return false
		}
	}
	return true
}

// pump hands one batch of one random shard to the stream processor.
func (s *stages) pump() { s.pumpShard(s.shards[s.c.rng.Intn(len(s.shards))]) }

func (s *stages) pumpAll() bool {
	moved := false
	for _, i := range s.c.rng.Perm(len(s.shards)) {
		moved = s.pumpShard(s.shards[i]) || moved
	}
	return moved
}

func (s *stages) pumpShard(sh *shard) bool {
	w := s.c
	s.ingest()
	if sh.pos > 0 && w.inject(FaultStreamReplay, 0.05) {
		sh.pos -= 1 + w.rng.Intn(min(sh.pos, 8))
	}
	if sh.pos >= len(sh.recs) {
		return false
	}
	n := min(len(sh.recs)-sh.pos, 1+w.rng.Intn(10))
	batch := sh.recs[sh.pos : sh.pos+n]
	c0 := w.injected
	failures := s.proc.Process(s.ctx, batch)
	if len(failures) > 0 && w.injected == c0 {
		w.violate(s.lossInv, "the stream processor failed %d records without an injected fault: %v", len(failures), failures[0].Err)
	}
	failed := map[string]bool{}
	for _, f := range failures {
		failed[f.EventID] = true
	}
	next := sh.pos + n
	for i, c := range batch {
		if failed[c.EventID] {
			next = sh.pos + i
			break
		}
	}
	if w.inject(FaultStreamRedelivered, 0.04) {
		next = sh.pos
	}
	w.tracef("stream batch of %d from %d: %d failed, next %d", n, sh.pos, len(failures), next)
	moved := next != sh.pos
	sh.pos = next
	return moved
}

// The queue and the worker.

// deliver receives one batch and hands it to the worker; it reports
// whether a message was received.
func (s *stages) deliver() bool {
	batch := s.queue.Receive(1 + s.c.rng.Intn(10))
	if len(batch) == 0 {
		return false
	}
	if s.c.inject(FaultVisibilityTimeout, 0.04) {
		// This worker stalls; the messages become visible again and a
		// second worker takes them (and maybe more), then this one goes on.
		s.clock.Advance(s.qcfg.VisibilityTimeout + time.Duration(1+s.c.rng.Intn(5))*time.Second)
		if second := s.queue.Receive(10); len(second) > 0 {
			s.handle(second)
		}
	}
	s.handle(batch)
	return true
}

// groupTask is the task id of a message group (the item key
// "userId/taskId", cancel.Message.GroupID).
func groupTask(group string) string { return group[strings.LastIndex(group, "/")+1:] }

func (s *stages) handle(batch []inproc.Received) {
	w := s.c
	crash := -1
	if w.inject(FaultWorkerCrash, 0.04) {
		crash = w.rng.Intn(len(batch))
	}
	ds := make([]cancel.Delivery, 0, len(batch))
	before := map[string]int{}
	for i, r := range batch {
		if crash >= 0 && i > crash {
			break
		}
		ds = append(ds, cancel.Delivery{ID: r.MessageID, GroupID: r.GroupID, Body: r.Body})
		before[r.GroupID] = s.blamed[s.blameKey(r.GroupID)]
		if r.ReceiveCount > s.qcfg.MaxReceiveCount {
			w.violate(s.lossInv, "message %s received %d times (bound %d)", r.MessageID, r.ReceiveCount, s.qcfg.MaxReceiveCount)
		}
	}
	if s.onHandle != nil {
		for _, d := range ds {
			s.onHandle(d)
		}
	}
	failed := map[string]bool{}
	for _, id := range s.worker.HandleBatch(s.ctx, ds) {
		failed[id] = true
	}
	for _, d := range ds {
		if failed[d.ID] && s.blamed[s.blameKey(d.GroupID)] == before[d.GroupID] {
			w.violate(s.lossInv, "message %s (item %s) failed without an injected fault: it would loop to the DLQ", d.ID, d.GroupID)
		}
	}
	w.tracef("worker batch of %d: %d failed, crash at %d", len(ds), len(failed), crash)
	if crash >= 0 {
		return
	}
	for _, r := range batch {
		if failed[r.MessageID] || w.inject(FaultAckLost, 0.04) {
			continue
		}
		if s.queue.Ack(r) {
			s.msgs[r.MessageID].acked = true
		}
	}
}

// enqueuer is the SQS adapter's contract over the FIFO queue model: it
// stops at the first refused message, and a call may fail after sending.
type enqueuer struct{ s *stages }

func (e enqueuer) Enqueue(_ context.Context, msgs []cancel.Message) ([]cancel.Failed, error) {
	s, w := e.s, e.s.c
	if w.inject(FaultEnqueueUnknown, 0.04) {
		for _, m := range msgs {
			s.send(m)
		}
		return nil, fmt.Errorf("send message batch: %w", errTimeout)
	}
	var failed []cancel.Failed
	for _, m := range msgs {
		if len(failed) > 0 {
			failed = append(failed, cancel.Failed{Message: m, Err: cancel.ErrNotSent})
			continue
		}
		if w.inject(FaultEnqueueRejected, 0.06) {
			failed = append(failed, cancel.Failed{Message: m, Err: errThrottled})
			continue
		}
		s.send(m)
	}
	return failed, nil
}

// send puts one message on the queue and checks the deduplication
// guarantee: one stream record gives at most one message per
// deduplication window.
func (s *stages) send(m cancel.Message) {
	s.sends++
	dedup := m.DedupID()
	if s.dedupID != nil {
		dedup = s.dedupID(m, s.sends)
	}
	id, dup := s.queue.Send(m.GroupID(), dedup, m.Encode())
	if dup {
		return
	}
	now := s.clock.Now()
	if prev, ok := s.eventSent[m.EventID]; ok && now.Sub(prev) < s.qcfg.DedupWindow {
		s.c.violate(s.lossInv, "stream record %s of item %s gave a second queue message %s within the deduplication window (first %s ago)",
			m.EventID, m.Key(), id, now.Sub(prev))
	}
	s.eventSent[m.EventID] = now
	s.msgs[id] = &msgState{eventID: m.EventID, taskID: m.Sort}
	s.msgOrder = append(s.msgOrder, id)
}

type msgState struct {
	eventID, taskID string
	acked           bool
}

// checkQueue checks (lossInv) that the queue is empty, every message was
// acknowledged or dead-lettered, and the stream was consumed.
func (s *stages) checkQueue() {
	if n := s.queue.Len(); n > 0 {
		s.c.violate(s.lossInv, "%d messages are still queued", n)
	}
	inDLQ := map[string]bool{}
	for _, r := range s.queue.DLQ() {
		inDLQ[r.MessageID] = true
	}
	for _, id := range s.msgOrder {
		if m := s.msgs[id]; !m.acked && !inDLQ[id] {
			s.c.violate(s.lossInv, "message %s (item %s, record %s) was neither handled nor dead-lettered", id, m.taskID, m.eventID)
		}
	}
	if !s.streamDone() {
		s.c.violate(s.lossInv, "stream records are left unprocessed")
	}
}
