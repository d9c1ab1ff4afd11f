package inproc

import (
	"context"
	"hash/fnv"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/changefeed"
)

// Hooks let a fault-injection harness (the simulation) reorder,
// duplicate, delay and drop what one stage hands the next, and see each
// stage's outcome, on the Engine's virtual clock. They model what AWS
// allows: a stream shard replays records or loses a checkpoint, a worker
// stalls past the visibility timeout or crashes before its acks, a timer
// fires early, late, twice or not at all. Every field is optional; the
// zero value changes nothing. The queue's own hooks are Queue.Fail and
// Queue.LoseAck.
type Hooks struct {
	// StreamBatch is asked before a shard's batch, with the shard's
	// position and how many records wait from it: back moves the position
	// back that many records first (the stream replays them), and n > 0
	// bounds the batch (else Options.StreamBatchSize).
	StreamBatch func(pos, waiting int) (back, n int)
	// StreamHandled sees a batch the processor handled and its failures;
	// true loses the batch's checkpoint (the function timed out after its
	// work), so the whole batch comes again.
	StreamHandled func(batch []changefeed.Change, failures []cancel.Failure) (redeliver bool)
	// WorkerStall is asked when a worker batch is received: a positive
	// duration stalls that worker so long before its work (the clock moves
	// on); past the visibility timeout a second worker receives and
	// handles the visible messages first.
	WorkerStall func() time.Duration
	// BeforeWorker is asked before the worker handles a batch: crash >= 0
	// crashes the worker after the message at that index (the worker gets
	// the messages up to it) and before any ack.
	BeforeWorker func(batch []Received) (crash int)
	// WorkerHandled sees the messages the worker handled and the ids it
	// failed, before the acks.
	WorkerHandled func(batch []Received, failed map[string]bool)
	// FireEarly is how far past now a step's firing reaches: schedules due
	// within it fire early.
	FireEarly func() time.Duration
	// Deliveries is asked for each schedule the timer fires: its firing is
	// invoked once per delay returned, that long after now (late, or a
	// duplicate); none drops it. Without the hook: once, now.
	Deliveries func(s contract.Schedule) []time.Duration
	// RetryDelay is how long after its attempts-th failed attempt a
	// firing is tried again. Default: Options.FireRetryDelay.
	RetryDelay func(attempts int) time.Duration
}

// shard is one stream shard: the change records whose key hashes to it,
// and how far the processor has read them.
type shard struct {
	recs []changefeed.Change
	pos  int
}

func (e *Engine) shardKey(c changefeed.Change) string {
	if e.opts.ShardKey != nil {
		return e.opts.ShardKey(c)
	}
	return c.Key.String()
}

// ingest moves the feed's new records onto their shards.
func (e *Engine) ingest() {
	if e.feed == nil { // wired with WireFiring: no stream stage
		return
	}
	all, next := e.feed.Changes(e.feedPos)
	e.feedPos = next
	for _, c := range all {
		h := fnv.New32a()
		_, _ = h.Write([]byte(e.shardKey(c)))
		sh := &e.shards[int(h.Sum32()%uint32(len(e.shards)))]
		sh.recs = append(sh.recs, c)
	}
}

// Shards is how many shards the stream has (Options.StreamShards).
func (e *Engine) Shards() int { return len(e.shards) }

// StreamDone reports whether every shard's records were processed.
func (e *Engine) StreamDone() bool {
	e.ingest()
	for _, sh := range e.shards {
		if sh.pos < len(sh.recs) {
			return false
		}
	}
	return true
}

// Idle reports whether nothing is in flight: the stream processed, the
// queue empty (or dead-lettered) and no firing waiting for its attempt.
func (e *Engine) Idle() bool {
	return e.StreamDone() && e.Queue.Len() == 0 && len(e.pending) == 0
}

// Invoke adds one invocation of s's firing at at (a duplicate invocation
// the timer makes, or the retry of a concurrent one), with its attempts.
func (e *Engine) Invoke(s contract.Schedule, at time.Time, attempts int) {
	e.pending = append(e.pending, Invocation{Schedule: s, Attempts: attempts, NextAttempt: at})
}

// WireFiring wires only the firing, for a pipeline without a stream or
// queue stage (services that arm the timer themselves): FireSchedules
// fires the timer's due schedules into fire, with the hooks' deliveries,
// retries and dead letters, as Wire's firing does.
func (e *Engine) WireFiring(fire FireFunc) { e.fire = fire }

// NextAttempt is when the earliest waiting invocation (a late or
// duplicate delivery, or a retry) is due; false when none waits. A driver
// without a stream or queue stage jumps the clock to it, or to the
// timer's next schedule, and calls FireSchedules.
func (e *Engine) NextAttempt() (time.Time, bool) {
	var next time.Time
	for _, inv := range e.pending {
		if next.IsZero() || inv.NextAttempt.Before(next) {
			next = inv.NextAttempt
		}
	}
	return next, !next.IsZero()
}

// Redrive moves the dead-lettered firings back, to be tried again now
// with their attempts reset, as an operator's redrive of the timer's
// dead-letter queue; it returns them.
func (e *Engine) Redrive() []Invocation {
	dead := e.dead
	e.dead = nil
	for _, inv := range dead {
		e.Invoke(inv.Schedule, e.Clock.Now(), 0)
	}
	return dead
}

// handle hands a received batch to the worker (up to a crash) and
// acknowledges what did not fail, unless it crashed.
func (e *Engine) handle(ctx context.Context, batch []Received) int {
	crash := -1
	if e.hooks.BeforeWorker != nil {
		crash = e.hooks.BeforeWorker(batch)
	}
	if crash >= 0 && crash+1 < len(batch) {
		batch = batch[:crash+1]
	}
	ds := make([]cancel.Delivery, len(batch))
	for i, r := range batch {
		ds[i] = cancel.Delivery{ID: r.MessageID, GroupID: r.GroupID, Body: r.Body}
	}
	failed := map[string]bool{}
	for _, id := range e.Worker.HandleBatch(ctx, ds) {
		failed[id] = true
	}
	if e.hooks.WorkerHandled != nil {
		e.hooks.WorkerHandled(batch, failed)
	}
	if crash >= 0 {
		return len(failed)
	}
	for _, r := range batch {
		if !failed[r.MessageID] {
			e.Queue.Ack(r)
		}
	}
	return len(failed)
}
