package reconcile

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// DriftKind is what a pass would repair.
type DriftKind string

// The kinds of drift a pass repairs.
const (
	// DriftMissing: an armed item (or its reminder) has no schedule: the
	// pass creates it.
	DriftMissing DriftKind = "missing"
	// DriftOrphaned: a schedule whose item is gone or no longer armed:
	// the pass deletes it.
	DriftOrphaned DriftKind = "orphaned"
	// DriftMisplaced: a schedule at another time than its armed item's
	// due time: the pass moves it (or deletes it and makes the right one).
	DriftMisplaced DriftKind = "misplaced"
	// DriftOverdue: an armed item past its due time by more than the
	// grace period: the pass fires it.
	DriftOverdue DriftKind = "overdue"
	// DriftUndelivered: a claimed (fired) item whose delivery is not
	// recorded, past the grace period: the pass delivers it again.
	DriftUndelivered DriftKind = "claimed-but-undelivered"
)

// DriftKinds lists the kinds in the order reports show them.
var DriftKinds = []DriftKind{DriftMissing, DriftOrphaned, DriftMisplaced, DriftOverdue, DriftUndelivered}

// Finding is one repair a pass would make.
type Finding struct {
	Kind DriftKind
	// Key is the item's key (zero for a schedule whose item is unknown).
	Key contract.Key
	// Schedule is the schedule's name, and At the time it is (or would
	// be) at; Due is the item's due time, when known.
	Schedule string
	At       time.Time
	Due      time.Time
}

// PlanResult is what a pass would do: each repair, and the pass's
// counts as if it had made them.
type PlanResult struct {
	Findings []Finding
	Result   Result
}

// Plan runs one whole pass of the reconciler's rules over d without
// acting: the timer's writes, the firings, the confirmation marks and
// the checkpoint are recorded, never made; only reads reach the table
// and the timer. It is what the reconciler would repair now (an
// operator's dry run). An adopter's Policy writes items, so it is not
// asked: the plan is the reconciler's own repairs. cfg.Budget is
// ignored (the pass runs to its end, at cfg.RatePerSec).
func Plan(ctx context.Context, cfg Config, d Deps) (PlanResult, error) {
	d.Policy = nil
	return PlanWithPolicy(ctx, cfg, d)
}

func planPass(ctx context.Context, cfg Config, d Deps) (PlanResult, error) {
	rec := &recorder{items: d.Items, schema: d.Schema, deleted: map[string]bool{}, seen: map[string]contract.Key{}}
	d.Items = readOnlyItems{d.Items}
	d.Scheduler, d.Schedules = rec.timer(d.Scheduler, d.Schedules)
	d.Firer = rec
	d.Metrics = nil
	d.Checkpoints = &scratch{}
	cfg.Budget = 24 * time.Hour
	r, err := New(cfg, d)
	if err != nil {
		return PlanResult{}, err
	}
	res, err := r.Run(ctx)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return PlanResult{Findings: rec.findings, Result: res}, err
}

// Only narrows d to the one item k: its listing holds that item alone
// (when the reconciler owes it work), the timer's listing that item's
// schedule alone, and the checkpoint is a scratch one, so a pass of
// Run, or Plan, repairs or reports that item only, by the same rules.
func Only(d Deps, k contract.Key) Deps {
	one := oneItem{Items: d.Items, key: k, schema: d.Schema}
	d.Schedules = oneSchedule{Reader: d.Schedules, items: d.Items, key: k, name: scheduleNameOf(d, k)}
	d.Items = one
	if m, ok := one.Items.(Marks); ok {
		d.Items = oneItemMarks{one, m}
	}
	d.Checkpoints = &scratch{}
	return d
}

func scheduleNameOf(d Deps, k contract.Key) string {
	if n, ok := d.Scheduler.(Namer); ok {
		return n.ScheduleName(k)
	}
	return d.Schema.ScheduleName(k)
}

// scratch is a checkpoint that starts a whole pass and keeps nothing.
type scratch struct{ cp Checkpoint }

func (s *scratch) Load(context.Context) (Checkpoint, error) { return Checkpoint{}, nil }
func (s *scratch) Save(_ context.Context, cp Checkpoint) error {
	s.cp = cp
	return nil
}

// readOnlyItems hides Marks (and Counter): a plan records no confirmation.
type readOnlyItems struct{ Items }

// oneItem lists the one item the reconciler owes work, if it does.
type oneItem struct {
	Items
	key    contract.Key
	schema contract.Schema
}

func (o oneItem) List(ctx context.Context, req ListRequest) (ItemPage, error) {
	if req.Cursor != "" {
		return ItemPage{}, nil
	}
	it, err := o.Items.Get(ctx, o.key)
	if errors.Is(err, ErrItemNotFound) {
		return ItemPage{}, nil
	}
	if err != nil {
		return ItemPage{}, err
	}
	armed := o.schema.Armed(it.Item)
	if !armed && !(it.State == o.schema.FiredState && !it.Delivered) {
		return ItemPage{}, nil
	}
	if armed && !req.DueBy.IsZero() && it.Due.After(req.DueBy) {
		return ItemPage{}, nil
	}
	return ItemPage{Items: []Item{it}}, nil
}

// oneItemMarks keeps the store's Marks, so a repair of one item records
// its confirmation as a pass does.
type oneItemMarks struct {
	oneItem
	Marks
}

// oneSchedule lists what the timer holds under the one item's schedule
// name (read at the item's due time, for a timer that names by it).
type oneSchedule struct {
	timer.Reader
	items Items
	key   contract.Key
	name  string
}

func (o oneSchedule) List(ctx context.Context, page timer.PageRequest) (timer.Page, error) {
	if page.Cursor != "" {
		return timer.Page{}, nil
	}
	var at time.Time
	if it, err := o.items.Get(ctx, o.key); err == nil {
		at = it.Due
	}
	s, err := o.Reader.Get(ctx, o.name, at)
	if errors.Is(err, timer.ErrNotFound) {
		return timer.Page{}, nil
	}
	if err != nil {
		return timer.Page{}, err
	}
	return timer.Page{Schedules: []timer.Schedule{s}}, nil
}

// recorder stands in for the timer's writes and the firer in a plan.
type recorder struct {
	items  Items
	schema contract.Schema
	mu     sync.Mutex
	// deleted holds the names the plan deleted: they read as gone, and a
	// create of one after its delete is the misplaced repair's second
	// half, not a finding of its own.
	deleted  map[string]bool
	seen     map[string]contract.Key
	findings []Finding
	reader   timer.Reader
}

func (r *recorder) add(f Finding) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.findings = append(r.findings, f)
}

// timer returns the recording timer, a Namer when sc is one.
func (r *recorder) timer(sc timer.Timer, rd timer.Reader) (timer.Timer, timer.Reader) {
	r.reader = rd
	t := &planTimer{r: r}
	if n, ok := sc.(Namer); ok {
		nt := &namedPlanTimer{planTimer: t, n: n}
		return nt, nt
	}
	return t, t
}

type planTimer struct{ r *recorder }

type namedPlanTimer struct {
	*planTimer
	n Namer
}

func (t *namedPlanTimer) ScheduleName(k contract.Key) string { return t.n.ScheduleName(k) }

func (t *planTimer) Get(ctx context.Context, name string, at time.Time) (timer.Schedule, error) {
	t.r.mu.Lock()
	gone := t.r.deleted[name]
	t.r.mu.Unlock()
	if gone {
		return timer.Schedule{}, timer.ErrNotFound
	}
	s, err := t.r.reader.Get(ctx, name, at)
	if err == nil && s.Payload.Key != (contract.Key{}) {
		t.r.mu.Lock()
		t.r.seen[name] = s.Payload.Key
		t.r.mu.Unlock()
	}
	return s, err
}

func (t *planTimer) List(ctx context.Context, page timer.PageRequest) (timer.Page, error) {
	p, err := t.r.reader.List(ctx, page)
	t.r.mu.Lock()
	for _, s := range p.Schedules {
		if s.Payload.Key != (contract.Key{}) {
			t.r.seen[s.Name] = s.Payload.Key
		}
	}
	t.r.mu.Unlock()
	return p, err
}

func (t *planTimer) Arm(_ context.Context, s timer.Schedule) error {
	t.r.mu.Lock()
	followUp := t.r.deleted[s.Name]
	delete(t.r.deleted, s.Name)
	t.r.mu.Unlock()
	if !followUp {
		t.r.add(Finding{Kind: DriftMissing, Key: s.Payload.Key, Schedule: s.Name, At: s.At, Due: s.Payload.Due})
	}
	return nil
}

func (t *planTimer) Move(_ context.Context, s timer.Schedule, from time.Time) error {
	t.r.add(Finding{Kind: DriftMisplaced, Key: s.Payload.Key, Schedule: s.Name, At: from, Due: s.Payload.Due})
	return nil
}

// Disarm records an orphan, or a misplaced schedule when its item is
// armed (at another due time: the pass deletes only those).
func (t *planTimer) Disarm(ctx context.Context, name string, at time.Time) error {
	t.r.mu.Lock()
	k, known := t.r.seen[name]
	t.r.deleted[name] = true
	t.r.mu.Unlock()
	f := Finding{Kind: DriftOrphaned, Key: k, Schedule: name, At: at}
	if known {
		if it, err := t.r.items.Get(ctx, k); err == nil && t.r.schema.Armed(it.Item) {
			f.Kind, f.Due = DriftMisplaced, it.Due
		}
	}
	t.r.add(f)
	return nil
}

// Fire records an overdue item, or an undelivered firing, as fired.
func (r *recorder) Fire(ctx context.Context, p contract.Payload) (fire.Outcome, error) {
	f := Finding{Kind: DriftOverdue, Key: p.Key, Due: p.Due}
	if it, err := r.items.Get(ctx, p.Key); err == nil && it.State == r.schema.FiredState {
		f.Kind = DriftUndelivered
	}
	r.add(f)
	return fire.Fired, nil
}
