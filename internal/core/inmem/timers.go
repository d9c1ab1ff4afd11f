package inmem

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerkind"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// TimerScheduler is what the simulation and `make dev` need of a
// timer's in-memory stand-in (timerkind.Standin). Scheduler (EventBridge
// Scheduler), Executions (Step Functions) and TTLMarkers (DynamoDB TTL)
// implement it.
type TimerScheduler = timerkind.Standin

var (
	_ TimerScheduler = (*Scheduler)(nil)
	_ TimerScheduler = (*Executions)(nil)
	_ TimerScheduler = (*TTLMarkers)(nil)
)

// NewTimer returns the stand-in of the timer kind called l, as its kind
// registered it (timerkind.Register; importing
// internal/core/adapters/timers registers the built-in ones). now tells
// the time (the Step Functions horizon and its stop race); ttlDelay picks
// each lazy firing's delay after the due time (the TTL deletion; nil:
// none).
func NewTimer(l timerspec.Name, now func() time.Time, ttlDelay func() time.Duration) TimerScheduler {
	return timerkind.NewStandin(l, timerkind.MemoryOptions{Now: now, Delay: ttlDelay})
}

// NewTimerOf is NewTimer for the items of schema: the EventBridge
// Scheduler stand-in lists the schema's schedule names (ListPrefix), as
// the adapter's NamePrefix does.
func NewTimerOf(l timerspec.Name, schema contract.Schema, now func() time.Time, ttlDelay func() time.Duration) TimerScheduler {
	return timerkind.NewStandin(l, timerkind.MemoryOptions{Now: now, Delay: ttlDelay, Schema: schema})
}

// Executions is the Step Functions timer in memory, with the semantics of
// awssfn over one Standard state machine: one execution per item and due
// time, named timerspec.ExecutionName; a start with the name of a running
// execution is no duplicate; a stopped name armed again starts the next
// link of its restart chain (timerspec.RestartName after
// timerspec.RestartSecond of the closed link's stop time), so arming again
// finds the restart it started; a move stops the running link of the
// chain of its old due time and starts one; a cancel stops the running
// link of its due time's chain; a chain longer than
// timerspec.MaxRestarts is an error. Like the adapter, it never looks for
// an item's executions of other due times: those it leaves running fire,
// and the claim skips them. Each execution is a timer: its Wait ends at
// the due time, when Fire hands it over.
type Executions struct {
	mu  sync.Mutex
	now func() time.Time
	// running: schedule name -> execution name -> schedule.
	running map[string]map[string]contract.Schedule
	// closed names, and how each closed.
	closed map[string]closedExec
	// raced are executions whose stop lost the race with the Wait's end:
	// they still invoke.
	raced []contract.Schedule
	// StopLost, when set, is asked about each stop of an execution whose
	// Wait already ended (its due time passed) but that has not fired
	// yet: true means the stop came too late and the invocation happens
	// anyway (fault injection).
	StopLost func(s contract.Schedule) bool
	// Fail, when set, is called before each operation (fault injection).
	Fail func(op, name string) error
}

// chainRefusal is a chain too long, as awssfn refuses it: Permanent, so
// the cancel worker acknowledges the message (no retry shortens a chain).
type chainRefusal struct{ error }

func (r chainRefusal) Unwrap() error { return r.error }
func (chainRefusal) Permanent() bool { return true }

// closedExec is how an execution closed: fired (its Wait ended, or its
// stop lost that race), or stopped at a time (DescribeExecution's
// stopDate, which names the restart of it).
type closedExec struct {
	fired   bool
	stopped time.Time
}

// NewExecutions returns a state machine without executions.
func NewExecutions(now func() time.Time) *Executions {
	if now == nil {
		now = clock.System{}.Now
	}
	return &Executions{now: now, running: map[string]map[string]contract.Schedule{}, closed: map[string]closedExec{}}
}

func (e *Executions) fail(op, name string) error {
	if e.Fail == nil {
		return nil
	}
	return e.Fail(op, name)
}

// Arm implements timer.Timer as awssfn.Client.Arm does.
func (e *Executions) Arm(_ context.Context, s contract.Schedule) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.fail("Arm", s.Name); err != nil {
		return err
	}
	return e.start(s)
}

func (e *Executions) start(s contract.Schedule) error {
	if err := timerspec.CheckHorizon(s.At, e.now()); err != nil {
		return err
	}
	// The chain's first link not closed by a stop: it runs (the same name
	// and input: no duplicate), fired, or is started here.
	exec, running, err := e.find(s.Name, timerspec.ExecutionName(s.Name, s.At))
	switch {
	case err != nil:
		return err
	case running || e.closed[exec].fired:
		return nil
	}
	if e.running[s.Name] == nil {
		e.running[s.Name] = map[string]contract.Schedule{}
	}
	e.running[s.Name][exec] = s
	return nil
}

// find follows the restart chain of the item's execution called first,
// as awssfn does with DescribeExecution, to its first link that a stop
// did not close: the one running (ok), one that fired, or a name never
// started. A chain of more than timerspec.MaxRestarts restarts, all
// stopped, is an error wrapping timerspec.ErrRestartChain.
func (e *Executions) find(name, first string) (exec string, ok bool, err error) {
	exec, prev := first, time.Time{}
	for i := 0; ; i++ {
		if _, ok := e.running[name][exec]; ok {
			return exec, true, nil
		}
		c, used := e.closed[exec]
		switch {
		case !used || c.fired:
			return exec, false, nil
		case i == timerspec.MaxRestarts:
			return exec, false, chainRefusal{fmt.Errorf("execution %s: %w: it and its %d restarts are all stopped",
				first, timerspec.ErrRestartChain, timerspec.MaxRestarts)}
		}
		prev = timerspec.RestartSecond(prev, c.stopped)
		exec = timerspec.RestartName(first, prev)
	}
}

// Move implements timer.Timer: stop the running link of the chain
// of from (unless from is zero or s's due time; timer.ErrNotFound
// when none runs), start s's.
func (e *Executions) Move(_ context.Context, s contract.Schedule, from time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.fail("Move", s.Name); err != nil {
		return err
	}
	if err := timerspec.CheckHorizon(s.At, e.now()); err != nil {
		return err
	}
	if !from.IsZero() && !from.Equal(s.At) {
		if err := e.stopChain(s.Name, from); err != nil {
			return err
		}
	}
	return e.start(s)
}

// Disarm implements timer.Timer: stop the running link of the chain
// of at (the execution named for at, or its running restart);
// timer.ErrNotFound when none runs, or at is zero.
func (e *Executions) Disarm(_ context.Context, name string, at time.Time) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.fail("Disarm", name); err != nil {
		return err
	}
	if at.IsZero() {
		return timer.ErrNotFound
	}
	return e.stopChain(name, at)
}

// stopChain stops the item's running link of the chain of the due time
// at: timer.ErrNotFound when none runs.
func (e *Executions) stopChain(name string, at time.Time) error {
	exec, ok, err := e.find(name, timerspec.ExecutionName(name, at))
	switch {
	case err != nil:
		return err
	case !ok:
		return timer.ErrNotFound
	}
	e.stop(name, exec)
	return nil
}

func (e *Executions) stop(name, exec string) {
	s := e.running[name][exec]
	delete(e.running[name], exec)
	if len(e.running[name]) == 0 {
		delete(e.running, name)
	}
	if !s.At.After(e.now()) && e.StopLost != nil && e.StopLost(s) {
		e.closed[exec] = closedExec{fired: true}
		e.raced = append(e.raced, s)
		return
	}
	e.closed[exec] = closedExec{stopped: e.now()}
}

// Fire ends the Wait of every execution due at now: they invoke (and
// complete). Executions whose stop lost the race come too.
func (e *Executions) Fire(now time.Time) []contract.Schedule {
	e.mu.Lock()
	defer e.mu.Unlock()
	due := e.raced
	e.raced = nil
	for name, execs := range e.running {
		for n, s := range execs {
			if !s.At.After(now) {
				due = append(due, s)
				delete(execs, n)
				e.closed[n] = closedExec{fired: true}
			}
		}
		if len(execs) == 0 {
			delete(e.running, name)
		}
	}
	sortSchedules(due)
	return due
}

// Get implements timer.Reader. With a due time at, it is the
// running link of the chain of the execution named for at
// (timerspec.ExecutionName, or its running restart), as awssfn's
// DescribeExecution walk reads it: timer.ErrNotFound unless one
// runs. With at zero, which awssfn cannot read, it is the item's running
// execution that lookup picks, for the callers that know no due time.
func (e *Executions) Get(_ context.Context, name string, at time.Time) (contract.Schedule, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.fail("Get", name); err != nil {
		return contract.Schedule{}, err
	}
	var s contract.Schedule
	ok := false
	if at.IsZero() {
		s, ok = e.lookup(name)
	} else {
		exec, running, err := e.find(name, timerspec.ExecutionName(name, at))
		if err != nil {
			return contract.Schedule{}, err
		}
		s, ok = e.running[name][exec], running
	}
	if !ok {
		return contract.Schedule{}, timer.ErrNotFound
	}
	s.ClientToken = ""
	return s, nil
}

// lookup is the item's running execution with the latest due time,
// preferring one named timerspec.ExecutionName over a restart.
func (e *Executions) lookup(name string) (contract.Schedule, bool) {
	var out contract.Schedule
	found, named := false, false
	for n, s := range e.running[name] {
		isNamed := n == timerspec.ExecutionName(name, s.At)
		if !found || (isNamed && !named) || (isNamed == named && s.At.After(out.At)) {
			out, found, named = s, true, isNamed
		}
	}
	return out, found
}

// Lookup returns the item's running execution, without counting a call.
func (e *Executions) Lookup(name string) (contract.Schedule, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lookup(name)
}

// List implements timer.Reader as awssfn's ListExecutions of the
// RUNNING executions does: one entry per running execution, so an item
// with several (a restart, a stale one) is listed once for each, with its
// name, due time and payload (awssfn's listing has no payload; Get reads
// it). Entries come by name, then due time, then execution name; the
// cursor is the last entry's sort key.
func (e *Executions) List(_ context.Context, page timer.PageRequest) (timer.Page, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.fail("List", ""); err != nil {
		return timer.Page{}, err
	}
	var entries []listEntry
	for name, execs := range e.running {
		for n, s := range execs {
			s.ClientToken = ""
			// A space sorts before every character of a schedule name,
			// and the fixed-width time by time: the keys sort by name,
			// then due time.
			entries = append(entries, listEntry{key: name + " " + s.At.UTC().Format(sortableTime) + " " + n, s: s})
		}
	}
	return listPage(entries, page), nil
}

// sortableTime is a fixed-width layout whose strings sort as the times
// (years 0 to 9999).
const sortableTime = "20060102T150405.000000000"

// Running returns the running executions of the schedule called name, by
// execution name, without counting a call.
func (e *Executions) Running(name string) map[string]contract.Schedule {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]contract.Schedule, len(e.running[name]))
	for n, s := range e.running[name] {
		out[n] = s
	}
	return out
}

// All returns every running execution, ordered by name and due time.
func (e *Executions) All() []contract.Schedule {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []contract.Schedule
	for _, execs := range e.running {
		for _, s := range execs {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].At.Before(out[j].At)
	})
	return out
}

// TTLMarkers is the DynamoDB TTL timer in memory, with the semantics of
// ttlmarker: one marker per item carrying its due time; a cancel deletes
// it (a user's delete, which the stream filter drops); DynamoDB's TTL
// process deletes it lazily some time after its due time, and only that
// deletion fires (Fire is the sweeper).
type TTLMarkers struct {
	mu      sync.Mutex
	markers map[string]ttlMarker
	delay   func() time.Duration
	// Fail, when set, is called before each operation (fault injection).
	Fail func(op, name string) error
}

type ttlMarker struct {
	s        contract.Schedule
	deleteAt time.Time
}

// NewTTLMarkers returns a table without markers; delay picks how long
// after its due time the sweeper deletes each marker (nil: at once).
func NewTTLMarkers(delay func() time.Duration) *TTLMarkers {
	if delay == nil {
		delay = func() time.Duration { return 0 }
	}
	return &TTLMarkers{markers: map[string]ttlMarker{}, delay: delay}
}

func (m *TTLMarkers) fail(op, name string) error {
	if m.Fail == nil {
		return nil
	}
	return m.Fail(op, name)
}

func (m *TTLMarkers) put(s contract.Schedule) {
	m.markers[s.Name] = ttlMarker{s: s, deleteAt: s.At.Add(m.delay())}
}

// Arm implements timer.Timer: a marker with the same payload is a
// success, another one timer.ErrExists.
func (m *TTLMarkers) Arm(_ context.Context, s contract.Schedule) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fail("Arm", s.Name); err != nil {
		return err
	}
	if cur, ok := m.markers[s.Name]; ok {
		if cur.s.Payload.Equal(s.Payload) {
			return nil
		}
		return timer.ErrExists
	}
	m.put(s)
	return nil
}

// Move implements timer.Timer: overwrite the marker (a new TTL).
func (m *TTLMarkers) Move(_ context.Context, s contract.Schedule, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fail("Move", s.Name); err != nil {
		return err
	}
	if _, ok := m.markers[s.Name]; !ok {
		return timer.ErrNotFound
	}
	m.put(s)
	return nil
}

// Disarm implements timer.Timer: the user's delete of the marker.
func (m *TTLMarkers) Disarm(_ context.Context, name string, _ time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fail("Disarm", name); err != nil {
		return err
	}
	if _, ok := m.markers[name]; !ok {
		return timer.ErrNotFound
	}
	delete(m.markers, name)
	return nil
}

// Fire is the TTL sweeper: it deletes every marker whose delay after its
// due time has passed, and returns them (the TTL deletions that reach the
// firing function).
func (m *TTLMarkers) Fire(now time.Time) []contract.Schedule {
	m.mu.Lock()
	defer m.mu.Unlock()
	var due []contract.Schedule
	for name, mk := range m.markers {
		if !mk.deleteAt.After(now) {
			due = append(due, mk.s)
			delete(m.markers, name)
		}
	}
	sortSchedules(due)
	return due
}

// Get implements timer.Reader: the marker's schedule, without a
// client token (a marker stores none).
func (m *TTLMarkers) Get(_ context.Context, name string, _ time.Time) (contract.Schedule, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fail("Get", name); err != nil {
		return contract.Schedule{}, err
	}
	mk, ok := m.markers[name]
	if !ok {
		return contract.Schedule{}, timer.ErrNotFound
	}
	mk.s.ClientToken = ""
	return mk.s, nil
}

// Lookup returns a marker's schedule, without counting a call.
func (m *TTLMarkers) Lookup(name string) (contract.Schedule, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mk, ok := m.markers[name]
	return mk.s, ok
}

// List implements timer.Reader (names only).
func (m *TTLMarkers) List(_ context.Context, page timer.PageRequest) (timer.Page, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.fail("List", ""); err != nil {
		return timer.Page{}, err
	}
	entries := make([]listEntry, 0, len(m.markers))
	for n := range m.markers {
		entries = append(entries, listEntry{key: n, s: contract.Schedule{Name: n}})
	}
	return listPage(entries, page), nil
}

// All returns every marker's schedule, ordered by name.
func (m *TTLMarkers) All() []contract.Schedule {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]contract.Schedule, 0, len(m.markers))
	for _, mk := range m.markers {
		out = append(out, mk.s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// listEntry is one listed schedule and the key it sorts by, which is
// the cursor of a page it ends.
type listEntry struct {
	key string
	s   contract.Schedule
}

// listPage pages through entries (sorted by key, after the cursor) as
// ListSchedules does: at most the limit (timer.DefaultLimit when
// unset, never more than maxListResults), and a cursor when more follow.
func listPage(entries []listEntry, page timer.PageRequest) timer.Page {
	sort.Slice(entries, func(i, j int) bool { return entries[i].key < entries[j].key })
	i := sort.Search(len(entries), func(i int) bool { return entries[i].key > page.Cursor })
	entries = entries[i:]
	limit := page.Limit
	if limit <= 0 {
		limit = timer.DefaultLimit
	}
	limit = min(limit, maxListResults)
	var p timer.Page
	if len(entries) > limit {
		entries = entries[:limit]
		p.Cursor = entries[limit-1].key
	}
	for _, e := range entries {
		p.Schedules = append(p.Schedules, e.s)
	}
	return p
}

func sortSchedules(due []contract.Schedule) {
	sort.Slice(due, func(i, j int) bool {
		if !due[i].At.Equal(due[j].At) {
			return due[i].At.Before(due[j].At)
		}
		return due[i].Name < due[j].Name
	})
}

// Remote is a timer stand-in as its callers see the service across the
// network, for any of them (Scheduler, Executions, TTLMarkers): each call
// may wait Latency on Clock (holding no lock, so calls overlap), be
// refused for rate by an optional token bucket (timer.ErrThrottled), or
// meet a Fault; and it is counted (Stats). Fire, Lookup and All are the
// stand-in's own, uncounted.
type Remote struct {
	TimerScheduler
	bucket *Bucket
	// Fault, when set, is asked before each call (op "Arm", "Move",
	// "Disarm", "Get", "List"); a non-nil error is returned instead of
	// the call. With lost set the call takes effect and its answer is
	// lost: the error is returned all the same.
	Fault func(op, name string) (err error, lost bool)
	// Lost, when set, is asked after each call that succeeded and met no
	// Fault; a non-nil error is returned instead of its answer (the call
	// took effect). A failed call's answer is never lost.
	Lost func(op, name string) error
	// Latency, when set, is waited (on Clock) inside each call.
	Latency time.Duration
	Clock   clock.Clock

	mu                                               sync.Mutex // orders a create's look and its call, for Creates
	calls, throttled, creates, inFlight, maxInFlight atomic.Int64
}

var _ TimerScheduler = (*Remote)(nil)

// NewRemote wraps a stand-in; bucket nil means no rate limit.
func NewRemote(t TimerScheduler, bucket *Bucket) *Remote {
	return &Remote{TimerScheduler: t, bucket: bucket}
}

// RemoteStats are a Remote's counters: calls made, calls refused for
// rate, schedules created (a repeat of an existing one is not), and the
// most calls ever in flight at once.
type RemoteStats struct {
	Calls, Throttled, Creates, MaxInFlight int64
}

// Stats returns the counters.
func (r *Remote) Stats() RemoteStats {
	return RemoteStats{r.calls.Load(), r.throttled.Load(), r.creates.Load(), r.maxInFlight.Load()}
}

// enter starts a call: it counts it, waits the latency, takes a token and
// asks the fault. The call goes ahead when err is nil or lost is set.
func (r *Remote) enter(ctx context.Context, op, name string) (done func(), lost bool, err error) {
	r.calls.Add(1)
	n := r.inFlight.Add(1)
	for m := r.maxInFlight.Load(); n > m && !r.maxInFlight.CompareAndSwap(m, n); m = r.maxInFlight.Load() {
	}
	done = func() { r.inFlight.Add(-1) }
	if r.Latency > 0 && r.Clock != nil {
		if err := r.Clock.Sleep(ctx, r.Latency); err != nil {
			return done, false, err
		}
	}
	if r.bucket != nil && !r.bucket.Take() {
		r.throttled.Add(1)
		return done, false, fmt.Errorf("%s %s: ThrottlingException: %w", op, name, timer.ErrThrottled)
	}
	if r.Fault != nil {
		if ferr, lost := r.Fault(op, name); ferr != nil {
			if errors.Is(ferr, timer.ErrThrottled) {
				r.throttled.Add(1)
			}
			return done, lost, ferr
		}
	}
	return done, false, nil
}

// do runs one call through enter: a lost answer replaces the call's.
func (r *Remote) do(ctx context.Context, op, name string, call func() error) error {
	done, lost, err := r.enter(ctx, op, name)
	defer done()
	if err != nil && !lost {
		return err
	}
	cerr := call()
	if err != nil {
		return err
	}
	if cerr == nil && r.Lost != nil {
		return r.Lost(op, name)
	}
	return cerr
}

// Arm implements timer.Timer.
func (r *Remote) Arm(ctx context.Context, s contract.Schedule) error {
	return r.do(ctx, "Arm", s.Name, func() error {
		r.mu.Lock()
		defer r.mu.Unlock()
		_, had := r.TimerScheduler.Lookup(s.Name)
		err := r.TimerScheduler.Arm(ctx, s)
		if _, has := r.TimerScheduler.Lookup(s.Name); err == nil && !had && has {
			r.creates.Add(1)
		}
		return err
	})
}

// Move implements timer.Timer.
func (r *Remote) Move(ctx context.Context, s contract.Schedule, from time.Time) error {
	return r.do(ctx, "Move", s.Name, func() error { return r.TimerScheduler.Move(ctx, s, from) })
}

// Disarm implements timer.Timer.
func (r *Remote) Disarm(ctx context.Context, name string, at time.Time) error {
	return r.do(ctx, "Disarm", name, func() error { return r.TimerScheduler.Disarm(ctx, name, at) })
}

// Get implements timer.Reader.
func (r *Remote) Get(ctx context.Context, name string, at time.Time) (contract.Schedule, error) {
	var s contract.Schedule
	err := r.do(ctx, "Get", name, func() (err error) { s, err = r.TimerScheduler.Get(ctx, name, at); return err })
	return s, err
}

// List implements timer.Reader.
func (r *Remote) List(ctx context.Context, page timer.PageRequest) (timer.Page, error) {
	var p timer.Page
	err := r.do(ctx, "List", "", func() (err error) { p, err = r.TimerScheduler.List(ctx, page); return err })
	return p, err
}

// Bucket is a token bucket on a clock: Rate tokens a second, at most
// Burst stored.
type Bucket struct {
	mu     sync.Mutex
	clock  clock.Clock
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

// NewBucket returns a full bucket.
func NewBucket(c clock.Clock, rate float64, burst int) *Bucket {
	return &Bucket{clock: c, rate: rate, burst: float64(burst), tokens: float64(burst), last: c.Now()}
}

// Take takes a token if there is one.
func (b *Bucket) Take() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	if now.After(b.last) {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// ScaledClock is real time run Factor times faster: a second of it is
// 1/Factor of a real second. The benchmark uses it so that 10,000 calls
// at 50 a second take 200 clock seconds but 200/Factor real ones, while
// goroutines still really run concurrently.
type ScaledClock struct {
	Factor    float64
	base      time.Time
	realStart time.Time
}

// NewScaledClock starts at base.
func NewScaledClock(base time.Time, factor float64) *ScaledClock {
	return &ScaledClock{Factor: factor, base: base, realStart: time.Now()}
}

// Now implements clock.Clock.
func (c *ScaledClock) Now() time.Time {
	return c.base.Add(time.Duration(float64(time.Since(c.realStart)) * c.Factor))
}

// Sleep waits d/Factor of real time.
func (c *ScaledClock) Sleep(ctx context.Context, d time.Duration) error {
	return clock.System{}.Sleep(ctx, time.Duration(float64(d)/c.Factor))
}
