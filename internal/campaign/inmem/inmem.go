// Package inmem holds in-memory stand-ins for the campaign ports: a task
// and campaign store whose conditional writes apply the campaign rules, a
// scheduler with a token-bucket rate limit and injectable faults, a
// sender with an idempotency record (the outbox), and clocks (virtual,
// and real time scaled up). Tests, the benchmark and the simulation use
// them; the dev server can.
package inmem

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/clock"
)

// Store keeps tasks and campaigns.
type Store struct {
	mu        sync.Mutex
	tasks     map[campaign.Key]campaign.SendTask
	campaigns map[string]campaign.Campaign
	// terminal counts each campaign's tasks in a terminal state.
	terminal map[string]int
	// Writes counts successful task writes.
	Writes int
}

var (
	_ campaign.Tasks     = (*Store)(nil)
	_ campaign.Campaigns = (*Store)(nil)
)

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{tasks: map[campaign.Key]campaign.SendTask{}, campaigns: map[string]campaign.Campaign{}, terminal: map[string]int{}}
}

// PutCampaign writes a campaign as is.
func (s *Store) PutCampaign(c campaign.Campaign) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.campaigns[c.ID] = c
}

// PutTasks writes tasks as they are.
func (s *Store) PutTasks(ts ...campaign.SendTask) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range ts {
		s.put(t)
	}
}

// put writes t, keeping the terminal count of its campaign.
func (s *Store) put(t campaign.SendTask) {
	if old, ok := s.tasks[t.Key()]; ok && old.State.Terminal() {
		s.terminal[t.CampaignID]--
	}
	if t.State.Terminal() {
		s.terminal[t.CampaignID]++
	}
	s.tasks[t.Key()] = t
}

// settle completes the campaign once every one of its tasks is terminal:
// Provisioning or Active → Completed, in the same locked write as the
// last task's (the rule campaigndynamo.Store keeps).
func (s *Store) settle(id string, now time.Time) {
	c, ok := s.campaigns[id]
	if ok && c.Total > 0 && s.terminal[id] >= c.Total && (c.Status == campaign.Provisioning || c.Status == campaign.Active) {
		c.Status, c.UpdatedAt = campaign.Completed, now
		s.campaigns[id] = c
	}
}

// All returns every task of a campaign in index order.
func (s *Store) All(campaignID string) []campaign.SendTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []campaign.SendTask
	for k, t := range s.tasks {
		if k.CampaignID == campaignID {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b campaign.SendTask) int { return a.Index - b.Index })
	return out
}

// CountOpen counts a campaign's tasks that are not terminal.
func (s *Store) CountOpen(campaignID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for k, t := range s.tasks {
		if k.CampaignID == campaignID && !t.State.Terminal() {
			n++
		}
	}
	return n
}

// Get implements campaign.Tasks.
func (s *Store) Get(_ context.Context, k campaign.Key) (campaign.SendTask, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[k]
	if !ok {
		return campaign.SendTask{}, fmt.Errorf("task %s: %w", k.TaskID, campaign.ErrNotFound)
	}
	return t, nil
}

// Claim implements campaign.Tasks with the campaign.Claim rule (the
// contract's claim predicate).
func (s *Store) Claim(_ context.Context, k campaign.Key, due, now time.Time, lease time.Duration) (campaign.SendTask, error) {
	return s.move(k, "claim", func(t campaign.SendTask) (campaign.SendTask, error) { return campaign.Claim(t, due, now, lease) })
}

// TakeOver implements campaign.Tasks with the campaign.TakeOver rule
// (the contract's take-over predicate).
func (s *Store) TakeOver(_ context.Context, k campaign.Key, due, now time.Time, lease time.Duration) (campaign.SendTask, error) {
	return s.move(k, "take over", func(t campaign.SendTask) (campaign.SendTask, error) { return campaign.TakeOver(t, due, now, lease) })
}

// move applies a rule to the stored task as one conditional write.
func (s *Store) move(k campaign.Key, what string, rule func(campaign.SendTask) (campaign.SendTask, error)) (campaign.SendTask, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[k]
	if !ok {
		return campaign.SendTask{}, fmt.Errorf("%s %s: missing: %w", what, k.TaskID, campaign.ErrConditionFailed)
	}
	next, err := rule(t)
	if err != nil {
		return t, fmt.Errorf("%s %s: %w: %w", what, k.TaskID, campaign.ErrConditionFailed, err)
	}
	s.put(next)
	s.Writes++
	return next, nil
}

// Replace implements campaign.Tasks.
func (s *Store) Replace(_ context.Context, prev, next campaign.SendTask) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.tasks[prev.Key()]
	if !ok || cur.State != prev.State || cur.Attempt != prev.Attempt || next.Key() != prev.Key() {
		return fmt.Errorf("replace %s: %w", prev.ID, campaign.ErrConditionFailed)
	}
	s.put(next)
	s.Writes++
	if !cur.State.Terminal() && next.State.Terminal() {
		s.settle(next.CampaignID, next.UpdatedAt)
	}
	return nil
}

// List implements campaign.Tasks.
func (s *Store) List(_ context.Context, campaignID string, from, limit int) ([]campaign.SendTask, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []campaign.SendTask
	for i := from; len(out) < limit; i++ {
		t, ok := s.tasks[campaign.Key{CampaignID: campaignID, TaskID: campaign.TaskID(campaignID, i)}]
		if !ok {
			break
		}
		out = append(out, t)
	}
	return out, nil
}

// Open implements campaign.Tasks: the cursor is an offset into the open
// tasks sorted by key.
func (s *Store) Open(_ context.Context, cursor string, limit int) ([]campaign.SendTask, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	off := 0
	if cursor != "" {
		var err error
		if off, err = strconv.Atoi(cursor); err != nil {
			return nil, "", fmt.Errorf("bad cursor %q", cursor)
		}
	}
	keys := slices.SortedFunc(maps.Keys(s.tasks), func(a, b campaign.Key) int {
		if a.CampaignID != b.CampaignID {
			return cmpStr(a.CampaignID, b.CampaignID)
		}
		return cmpStr(a.TaskID, b.TaskID)
	})
	var open []campaign.SendTask
	for _, k := range keys {
		if t := s.tasks[k]; !t.State.Terminal() {
			open = append(open, t)
		}
	}
	if off >= len(open) {
		return nil, "", nil
	}
	end := min(off+limit, len(open))
	next := ""
	if end < len(open) {
		next = strconv.Itoa(end)
	}
	return open[off:end], next, nil
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Campaign implements campaign.Campaigns.
func (s *Store) Campaign(_ context.Context, id string) (campaign.Campaign, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.campaigns[id]
	if !ok {
		return campaign.Campaign{}, fmt.Errorf("campaign %s: %w", id, campaign.ErrNotFound)
	}
	return c, nil
}

// Counts is the number of a campaign's tasks in each state (the API's
// and the progress announcer's read).
func (s *Store) Counts(_ context.Context, campaignID string) (map[campaign.State]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[campaign.State]int{}
	for k, t := range s.tasks {
		if k.CampaignID == campaignID {
			out[t.State]++
		}
	}
	return out, nil
}

// SetStatus implements campaign.Campaigns.
func (s *Store) SetStatus(_ context.Context, id string, from []campaign.Status, to campaign.Status, reason string, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.campaigns[id]
	if !ok || !slices.Contains(from, c.Status) {
		return fmt.Errorf("campaign %s to %s: %w", id, to, campaign.ErrConditionFailed)
	}
	c.Status, c.UpdatedAt = to, now
	if reason != "" {
		c.CancelReason = reason
	}
	s.campaigns[id] = c
	return nil
}

// Scheduler is an in-memory EventBridge Scheduler: schedules by name,
// creates idempotent by ClientToken while the schedule exists, an
// optional token-bucket rate limit shared by every call, and a Fault hook.
type Scheduler struct {
	mu        sync.Mutex
	schedules map[string]campaign.ScheduleRequest
	bucket    *Bucket
	// Fault, when set, is asked before each call (op "create", "exists",
	// "delete"); a non-nil error is returned instead of the call. With
	// lost set the call takes effect and its answer is lost: the error is
	// returned all the same.
	Fault func(op, name string) (err error, lost bool)
	// Latency, when set, is waited (on Clock) inside each call.
	Latency time.Duration
	Clock   campaign.Clock

	calls, throttled, creates, inFlight, maxInFlight atomic.Int64
}

var _ campaign.Scheduler = (*Scheduler)(nil)

// NewScheduler returns an empty scheduler; bucket nil means no limit.
func NewScheduler(bucket *Bucket) *Scheduler {
	return &Scheduler{schedules: map[string]campaign.ScheduleRequest{}, bucket: bucket}
}

func (s *Scheduler) enter(ctx context.Context, op, name string) (done func(), lost bool, err error) {
	s.calls.Add(1)
	n := s.inFlight.Add(1)
	for {
		m := s.maxInFlight.Load()
		if n <= m || s.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	done = func() { s.inFlight.Add(-1) }
	if s.Latency > 0 && s.Clock != nil {
		if err := s.Clock.Sleep(ctx, s.Latency); err != nil {
			return done, false, err
		}
	}
	if s.bucket != nil && !s.bucket.Take() {
		s.throttled.Add(1)
		return done, false, fmt.Errorf("%s %s: ThrottlingException: %w", op, name, campaign.ErrThrottled)
	}
	if s.Fault != nil {
		if ferr, lost := s.Fault(op, name); ferr != nil {
			if errors.Is(ferr, campaign.ErrThrottled) {
				s.throttled.Add(1)
			}
			return done, lost, ferr
		}
	}
	return done, false, nil
}

// Create implements campaign.Scheduler.
func (s *Scheduler) Create(ctx context.Context, r campaign.ScheduleRequest) error {
	done, lost, err := s.enter(ctx, "create", r.Name)
	defer done()
	if err != nil && !lost {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.schedules[r.Name]; ok {
		if cur.ClientToken == r.ClientToken {
			return err // idempotent repeat
		}
		if err == nil {
			err = fmt.Errorf("create %s: ConflictException: %w", r.Name, campaign.ErrScheduleExists)
		}
		return err
	}
	s.schedules[r.Name] = r
	s.creates.Add(1)
	return err
}

// Exists implements campaign.Scheduler.
func (s *Scheduler) Exists(ctx context.Context, _ string, name string) (bool, error) {
	done, _, err := s.enter(ctx, "exists", name)
	defer done()
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.schedules[name]
	return ok, nil
}

// Delete implements campaign.Scheduler.
func (s *Scheduler) Delete(ctx context.Context, _ string, name string) error {
	done, lost, err := s.enter(ctx, "delete", name)
	defer done()
	if err != nil && !lost {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.schedules[name]; !ok {
		if err == nil {
			err = fmt.Errorf("delete %s: ResourceNotFoundException: %w", name, campaign.ErrScheduleNotFound)
		}
		return err
	}
	delete(s.schedules, name)
	return err
}

// Remove deletes a schedule without a call (the schedule ran: ActionAfterCompletion DELETE).
func (s *Scheduler) Remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.schedules, name)
}

// Schedules returns a copy of the live schedules by name.
func (s *Scheduler) Schedules() map[string]campaign.ScheduleRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.schedules)
}

// SchedulerStats are the scheduler's counters.
type SchedulerStats struct {
	Calls, Throttled, Creates, MaxInFlight int64
}

// Stats returns the counters.
func (s *Scheduler) Stats() SchedulerStats {
	return SchedulerStats{s.calls.Load(), s.throttled.Load(), s.creates.Load(), s.maxInFlight.Load()}
}

// Bucket is a token bucket on a clock: Rate tokens a second, at most
// Burst stored.
type Bucket struct {
	mu     sync.Mutex
	clock  campaign.Clock
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

// NewBucket returns a full bucket.
func NewBucket(clock campaign.Clock, rate float64, burst int) *Bucket {
	return &Bucket{clock: clock, rate: rate, burst: float64(burst), tokens: float64(burst), last: clock.Now()}
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

// Sender is an outbox with an idempotency record: one message per key.
type Sender struct {
	mu    sync.Mutex
	clock campaign.Clock
	sent  map[string]campaign.Receipt
	// Outbox holds every message actually sent, in order.
	Outbox []campaign.Message
	// Fault, when set, is asked before each send; a non-nil error is
	// returned and nothing is sent.
	Fault func(m campaign.Message) error
}

var _ campaign.Sender = (*Sender)(nil)

// NewSender returns an empty outbox.
func NewSender(clock campaign.Clock) *Sender {
	return &Sender{clock: clock, sent: map[string]campaign.Receipt{}}
}

// Send implements campaign.Sender.
func (s *Sender) Send(_ context.Context, m campaign.Message) (campaign.Receipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.sent[m.IdempotencyKey]; ok {
		return r, nil
	}
	if s.Fault != nil {
		if err := s.Fault(m); err != nil {
			return campaign.Receipt{}, err
		}
	}
	r := campaign.Receipt{MessageID: fmt.Sprintf("msg-%d", len(s.Outbox)+1), SentAt: s.clock.Now()}
	s.sent[m.IdempotencyKey] = r
	s.Outbox = append(s.Outbox, m)
	return r, nil
}

// Sent implements campaign.Sender.
func (s *Sender) Sent(_ context.Context, key string) (campaign.Receipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.sent[key]
	if !ok {
		return campaign.Receipt{}, fmt.Errorf("%s: %w", key, campaign.ErrNotSent)
	}
	return r, nil
}

// Count returns how many messages were sent with key.
func (s *Sender) Count(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.Outbox {
		if m.IdempotencyKey == key {
			n++
		}
	}
	return n
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

// Now implements campaign.Clock.
func (c *ScaledClock) Now() time.Time {
	return c.base.Add(time.Duration(float64(time.Since(c.realStart)) * c.Factor))
}

// Sleep waits d/Factor of real time.
func (c *ScaledClock) Sleep(ctx context.Context, d time.Duration) error {
	return clock.System{}.Sleep(ctx, time.Duration(float64(d)/c.Factor))
}
