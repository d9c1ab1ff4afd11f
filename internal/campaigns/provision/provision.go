// Package provision arms the core timer's schedule of every Pending send
// task of a campaign (campaign.SendTask.Schedule on any core timer:
// EventBridge Scheduler, Step Functions, TTL), rate-limited and
// resumable: at most Concurrency timer calls in flight, paced to CallsPerSecond; a throttled call
// backs off with full jitter and is retried, never dropped; a Margin
// before its deadline the run stops, saves a checkpoint and reports that
// it must be invoked again; a run after a crash resumes from the last
// checkpoint. Creating a schedule twice is harmless: its idempotency token
// derives from the task's stored token, and an existing schedule of the
// task's name counts as created.
//
// The pacing, the bound and the retries are the core's paced caller
// (internal/core/timer/paced): this package adds the campaign's
// feeding, checkpoint and deadline. It imports no AWS SDK: the Lambda
// main wires the core's timer adapter (internal/core/adapters/timers), the
// stores, and re-invokes itself asynchronously when Result.Continue is
// set.
//
// A run goes on only while the campaign's owner is a sender
// (campaign.SenderCheck, asked at the start of every run, so again at
// each self re-invoke): a refused owner's campaign is cancelled
// (campaign.Gate, reason senderRemoved) and no schedule is made.
package provision

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timer/paced"
)

// Defaults of Config: the pacing ones are the core's (timer/paced).
const (
	DefaultConcurrency      = paced.DefaultConcurrency
	DefaultCallsPerSecond   = paced.DefaultCallsPerSecond
	DefaultMargin           = 90 * time.Second
	DefaultPageSize         = 100
	DefaultBaseBackoff      = paced.DefaultBaseBackoff
	DefaultMaxBackoff       = paced.DefaultMaxBackoff
	DefaultMaxErrorAttempts = paced.DefaultMaxErrorAttempts
)

// Config tunes a Provisioner. Zero fields take their defaults.
type Config struct {
	// Concurrency is the most timer calls in flight.
	// Default: 10.
	Concurrency int
	// CallsPerSecond paces the calls (no burst).
	// Default: 50, the lowest CreateSchedule rate quota EventBridge
	// Scheduler has documented; raise it to the account's quota.
	CallsPerSecond float64
	// Margin is how long before the deadline a run stops.
	// Default: 90 s.
	Margin time.Duration
	// PageSize is how many tasks a page read returns, and how often (in
	// tasks completed) the checkpoint is saved.
	// Default: 100.
	PageSize int
	// BaseBackoff and MaxBackoff bound the full-jitter back-off after a
	// throttle or an error: attempt n waits a random time in
	// [0, min(MaxBackoff, BaseBackoff·2ⁿ)).
	// Default: 50 ms and 5 s.
	BaseBackoff time.Duration
	MaxBackoff  time.Duration
	// MaxErrorAttempts is how many times a call failing with anything but
	// a throttle is tried before the task is left to the reconciler.
	// Default: 5.
	MaxErrorAttempts int
	// MaxAhead bounds how far past the checkpoint's watermark (the first
	// task not done) tasks are handed out, and so how many calls a run
	// after a crash repeats: at most PageSize + MaxAhead.
	// Default: 4 × PageSize.
	MaxAhead int
	// Seed seeds the jitter (0: random).
	Seed uint64
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Concurrency, DefaultConcurrency)
	def(&c.PageSize, DefaultPageSize)
	def(&c.MaxErrorAttempts, DefaultMaxErrorAttempts)
	def(&c.MaxAhead, 4*c.PageSize)
	if c.CallsPerSecond <= 0 {
		c.CallsPerSecond = DefaultCallsPerSecond
	}
	if c.Margin <= 0 {
		c.Margin = DefaultMargin
	}
	if c.BaseBackoff <= 0 {
		c.BaseBackoff = DefaultBaseBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	return c
}

// Checkpoint is how far a campaign's provisioning got: every task below
// Next is done (its schedule created, or it needs none).
type Checkpoint struct {
	CampaignID string
	Next       int
	// Created counts schedules created (or found), Errors tasks left to
	// the reconciler, Runs the runs so far.
	Created, Errors, Runs int
	Done                  bool
	UpdatedAt             time.Time
}

// Checkpoints keeps one checkpoint per campaign.
type Checkpoints interface {
	// Load returns the campaign's checkpoint; the zero Checkpoint (with
	// CampaignID) when there is none.
	Load(ctx context.Context, campaignID string) (Checkpoint, error)
	// Save writes it.
	Save(ctx context.Context, cp Checkpoint) error
}

// Result is what one run did.
type Result struct {
	Checkpoint
	// Continue: the run stopped before the end; invoke it again.
	Continue bool
	// Calls and Throttles count this run's Arm calls and throttles.
	Calls, Throttles int
}

// Provisioner runs provisioning.
type Provisioner struct {
	cfg         Config
	tasks       campaign.Tasks
	campaigns   campaign.Campaigns
	owners      campaign.SenderCheck
	timer       timer.Timer
	checkpoints Checkpoints
	clock       campaign.Clock
	caller      *paced.Caller
}

// New returns a Provisioner that provisions only while a campaign's
// owner passes owners.
func New(cfg Config, tasks campaign.Tasks, campaigns campaign.Campaigns, owners campaign.SenderCheck, s timer.Timer, cps Checkpoints, clock campaign.Clock) (*Provisioner, error) {
	if tasks == nil || campaigns == nil || owners == nil || s == nil || cps == nil || clock == nil {
		return nil, errors.New("provision: tasks, campaigns, sender check, timer, checkpoints and clock are required")
	}
	cfg = cfg.withDefaults()
	caller, err := paced.New(paced.Config{Concurrency: cfg.Concurrency, CallsPerSecond: cfg.CallsPerSecond,
		BaseBackoff: cfg.BaseBackoff, MaxBackoff: cfg.MaxBackoff, MaxErrorAttempts: cfg.MaxErrorAttempts, Seed: cfg.Seed}, clock)
	if err != nil {
		return nil, fmt.Errorf("provision: %w", err)
	}
	return &Provisioner{cfg: cfg, tasks: tasks, campaigns: campaigns, owners: owners, timer: s, checkpoints: cps, clock: clock, caller: caller}, nil
}

// feedEnd is how feeding ended: n tasks fed, all of them or not, or an
// error.
type feedEnd struct {
	n   int
	all bool
	err error
}

// outcome of one task.
type outcome struct {
	index            int
	created, failed  bool
	stopped          bool // given up because the run is stopping
	calls, throttles int
}

// Run provisions the campaign until done or until deadline minus the
// margin. A context cancelled midway (a crash) returns ctx's error and
// saves nothing; the next run resumes from the last saved checkpoint.
func (p *Provisioner) Run(ctx context.Context, campaignID string, deadline time.Time) (Result, error) {
	c, err := p.campaigns.Campaign(ctx, campaignID)
	if err != nil {
		return Result{}, fmt.Errorf("provision %s: %w", campaignID, err)
	}
	cp, err := p.checkpoints.Load(ctx, campaignID)
	if err != nil {
		return Result{}, fmt.Errorf("provision %s: load checkpoint: %w", campaignID, err)
	}
	cp.CampaignID = campaignID
	res := Result{Checkpoint: cp}
	if c.Status == campaign.CampaignCancelled || c.Status == campaign.Active || c.Status == campaign.Completed {
		res.Done = true
		return res, nil
	}
	if ok, err := campaign.Gate(ctx, p.owners, p.campaigns, c, p.clock.Now()); err != nil {
		return res, fmt.Errorf("provision %s: %w", campaignID, err)
	} else if !ok {
		res.Done = true // cancelled: the reconciler cancels its tasks
		return res, nil
	}
	if cp.Done { // a run saved Done and stopped before marking the campaign
		return res, p.markActive(ctx, campaignID)
	}
	if c.Status == campaign.Draft {
		err := p.campaigns.SetStatus(ctx, campaignID, []campaign.Status{campaign.Draft}, campaign.Provisioning, "", p.clock.Now())
		if err != nil && !errors.Is(err, campaign.ErrConditionFailed) {
			return res, fmt.Errorf("provision %s: %w", campaignID, err)
		}
	}
	res.Runs++
	stopAt := deadline.Add(-p.cfg.Margin)
	stopping := func() bool { return !p.clock.Now().Before(stopAt) }

	runCtx, cancel := context.WithCancel(ctx)
	work := make(chan campaign.SendTask)
	results := make(chan outcome)
	var wg sync.WaitGroup
	for range p.cfg.Concurrency {
		wg.Go(func() {
			for t := range work {
				results <- p.provisionOne(runCtx, t, stopping)
			}
		})
	}
	go func() { wg.Wait(); close(results) }()
	// On any return: stop the workers and the feeder, and wait for them.
	defer func() {
		cancel()
		for range results {
		}
	}()
	// The feeder reads pages from the checkpoint on and hands out every
	// task (those that need no schedule complete at once).
	fed := make(chan feedEnd, 1)
	credits := make(chan struct{}, p.cfg.MaxAhead)
	for range p.cfg.MaxAhead {
		credits <- struct{}{}
	}
	go func() {
		defer close(work)
		end := feedEnd{}
		defer func() { fed <- end }()
		var page []campaign.SendTask
		from, i := cp.Next, 0
		for {
			// Wait for room past the watermark, then decide: a stop is
			// seen before any more work is handed out.
			select {
			case <-credits:
			case <-runCtx.Done():
				return
			}
			if stopping() || runCtx.Err() != nil {
				return
			}
			if i == len(page) {
				if cur, err := p.campaigns.Campaign(runCtx, campaignID); err == nil && cur.Status == campaign.CampaignCancelled {
					end.all = true // nothing more to create
					return
				}
				var err error
				if page, err = p.tasks.List(runCtx, campaignID, from, p.cfg.PageSize); err != nil {
					end.err = fmt.Errorf("list tasks from %d: %w", from, err)
					return
				}
				if len(page) == 0 {
					end.all = true
					return
				}
				from, i = from+len(page), 0
			}
			select {
			case work <- page[i]:
				end.n++
				i++
			case <-runCtx.Done():
				return
			}
		}
	}()

	// The coordinator advances the checkpoint over the contiguous run of
	// completed tasks and saves it every page.
	doneIdx := map[int]bool{}
	received, total := 0, -1
	var end feedEnd
	stoppedAny := false
	lastSaved := cp.Next
	resultsOpen := results // nil once closed: a closed channel would yield zero outcomes
	for total < 0 || received < total {
		select {
		case o, ok := <-resultsOpen:
			if !ok {
				resultsOpen = nil
				continue
			}
			received++
			res.Calls += o.calls
			res.Throttles += o.throttles
			if o.stopped {
				stoppedAny = true
				cancel() // the run is stopping: stop the feeder and the other workers
				continue
			}
			if o.created {
				res.Created++
			}
			if o.failed {
				res.Errors++
			}
			doneIdx[o.index] = true
			for doneIdx[res.Next] {
				delete(doneIdx, res.Next)
				res.Next++
				credits <- struct{}{}
			}
			if res.Next-lastSaved >= p.cfg.PageSize {
				res.UpdatedAt = p.clock.Now()
				if err := p.checkpoints.Save(ctx, res.Checkpoint); err != nil {
					return res, fmt.Errorf("provision %s: save checkpoint: %w", campaignID, err)
				}
				lastSaved = res.Next
			}
		case end = <-fed:
			total = end.n
		case <-ctx.Done():
			return res, fmt.Errorf("provision %s: %w", campaignID, ctx.Err())
		}
	}
	if end.err != nil {
		return res, fmt.Errorf("provision %s: %w", campaignID, end.err)
	}
	if ctx.Err() != nil {
		return res, fmt.Errorf("provision %s: %w", campaignID, ctx.Err())
	}
	res.Done = end.all && !stoppedAny && len(doneIdx) == 0
	res.Continue = !res.Done
	res.UpdatedAt = p.clock.Now()
	if err := p.checkpoints.Save(ctx, res.Checkpoint); err != nil {
		return res, fmt.Errorf("provision %s: save checkpoint: %w", campaignID, err)
	}
	if res.Done {
		return res, p.markActive(ctx, campaignID)
	}
	return res, nil
}

// markActive records that every schedule is made (a campaign cancelled
// meanwhile stays cancelled).
func (p *Provisioner) markActive(ctx context.Context, campaignID string) error {
	err := p.campaigns.SetStatus(ctx, campaignID, []campaign.Status{campaign.Draft, campaign.Provisioning}, campaign.Active, "", p.clock.Now())
	if err != nil && !errors.Is(err, campaign.ErrConditionFailed) {
		return fmt.Errorf("provision %s: %w", campaignID, err)
	}
	return nil
}

// provisionOne creates one task's schedule through the paced caller:
// throttles are retried until the run stops; other errors up to
// MaxErrorAttempts, then the task is left to the reconciler.
func (p *Provisioner) provisionOne(ctx context.Context, t campaign.SendTask, stopping func() bool) outcome {
	o := outcome{index: t.Index}
	if t.State != campaign.Pending {
		return o // needs no schedule
	}
	sc := t.Schedule()
	res := p.caller.Do(ctx, stopping, func(ctx context.Context) error {
		if err := p.timer.Arm(ctx, sc); !errors.Is(err, timer.ErrExists) {
			return err
		}
		return nil // an earlier call made it
	})
	o.calls, o.throttles = res.Calls, res.Throttles
	switch {
	case res.Err == nil:
		o.created = true
	case res.Stopped():
		o.stopped = true
	default:
		o.failed = true // the reconciler recreates it
	}
	return o
}
