package ops

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerkind"
)

// ErrUsage marks a request the operator must change (exit code 2).
var ErrUsage = errors.New("usage")

// ParseKey reads "pk=<partition>,sk=<sort>" (or the schema's attribute
// names instead of pk and sk) for schema s.
func ParseKey(s contract.Schema, text string) (contract.Key, error) {
	var k contract.Key
	for _, part := range strings.Split(text, ",") {
		name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || value == "" {
			return k, fmt.Errorf("%w: key %q: write pk=<partition>,sk=<sort>", ErrUsage, text)
		}
		switch name {
		case "pk", s.PartitionKey:
			k.Partition = value
		case "sk", s.SortKey:
			k.Sort = value
		default:
			return k, fmt.Errorf("%w: key %q: %q is not pk, sk, %s or %s", ErrUsage, text, name, s.PartitionKey, s.SortKey)
		}
	}
	if s.NoSortKey && k.Sort != "" {
		return k, fmt.Errorf("%w: key %q: the table is keyed by %s alone: give pk only", ErrUsage, text, s.PartitionKey)
	}
	if k.Partition == "" || (!s.NoSortKey && k.Sort == "") {
		return k, fmt.Errorf("%w: key %q: give both pk and sk", ErrUsage, text)
	}
	return k, nil
}

// Verdict kinds: what an item's state comes to.
const (
	VerdictArmed       = "armed"
	VerdictFiring      = "firing"
	VerdictDelivered   = "delivered"
	VerdictClaimed     = "claimed"
	VerdictCancelled   = "cancelled"
	VerdictNoItem      = "no-item"
	VerdictMissing     = string(reconcile.DriftMissing)
	VerdictOrphaned    = string(reconcile.DriftOrphaned)
	VerdictMisplaced   = string(reconcile.DriftMisplaced)
	VerdictOverdue     = string(reconcile.DriftOverdue)
	VerdictUndelivered = string(reconcile.DriftUndelivered)
	// VerdictRules: the table's adopter rules (the campaign's) change
	// the item on the next pass; VerdictLeft: they leave an armed item
	// without its timer entry for now (a draft campaign's task).
	VerdictRules = "rules"
	VerdictLeft  = "left"
)

// Entry is what the timer holds for the item.
type Entry struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
	// Detail says what it is on its timer: the schedule's at()
	// expression, a running Step Functions execution, a TTL marker.
	Detail string `json:"detail"`
}

// WhyReport is everything known about one item.
type WhyReport struct {
	Table string            `json:"table"`
	Key   string            `json:"key"`
	Found bool              `json:"found"`
	Item  map[string]string `json:"item,omitempty"`
	Timer string            `json:"timer"`
	// Entry is the item's timer entry (nil: none); EntryNote says why
	// none was read, when the timer says (a Step Functions execution
	// that ended: "its execution is ABORTED").
	Entry     *Entry `json:"entry"`
	EntryNote string `json:"entryNote,omitempty"`
	// Claim are the contract's claim marks, by attribute name.
	Claim    map[string]string `json:"claim"`
	Messages []Letter          `json:"messages"`
	// Verdict is the kind (VerdictArmed, ...); Explanation says it in
	// plain words. Problem: something the reconciler or an operator must
	// mend (exit code 3).
	Verdict     string `json:"verdict"`
	Explanation string `json:"explanation"`
	Problem     bool   `json:"problem"`
	// History is what the functions logged about the item (why --logs).
	History []LogLine `json:"history,omitempty"`
}

// Why reads the item k of table t (or of the table that holds it, when
// t is "": see locate), its timer
// entry, its claim marks and the failure queues' messages about it, and
// says what it comes to, by the reconciler's own rules (reconcile.Plan
// narrowed to the item).
func (w *World) Why(ctx context.Context, table string, keyText string) (WhyReport, error) {
	t, k, err := w.locate(ctx, table, keyText)
	if errors.Is(err, ErrNoSuchKey) {
		// In none of the tables that could hold it: that is the answer.
		names := w.tablesFitting(keyText)
		first, _ := w.Stack.Table(names[0])
		k, _ := ParseKey(first.Schema, keyText)
		r := WhyReport{Table: strings.Join(names, ", "), Key: k.String(), Claim: map[string]string{}}
		r.Verdict, r.Explanation = VerdictNoItem, "no item with that key, and no timer entry, in any of these tables"
		return r, nil
	}
	if err != nil {
		return WhyReport{}, err
	}
	return w.why(ctx, t, k)
}

// tablesFitting are the names of the tables whose key schema keyText fits.
func (w *World) tablesFitting(keyText string) []string {
	var out []string
	for _, t := range w.Stack.Tables {
		if _, err := ParseKey(t.Schema, keyText); err == nil {
			out = append(out, t.Name)
		}
	}
	return out
}

func (w *World) why(ctx context.Context, t Table, k contract.Key) (WhyReport, error) {
	s := t.Schema
	r := WhyReport{Table: t.Name, Key: k.String(), Timer: t.TimerName, Claim: map[string]string{}}
	w.progress(1, 4, "reading the item")
	attrs, found, err := w.backend().Item(ctx, t, k)
	if err != nil {
		return r, err
	}
	var it contract.Item
	if found {
		r.Found, r.Item = true, attrs
		if it, err = s.ItemFrom(r.Item); err != nil {
			return r, fmt.Errorf("read %s: %w", k, err)
		}
		for _, a := range []string{s.ClaimAtAttr, s.FiredAtAttr, s.DeliveredAtAttr} {
			if v := r.Item[a]; v != "" {
				r.Claim[a] = v
			}
		}
	}
	w.progress(2, 4, "reading the timer")
	cfg, d, err := w.reconciler(t)
	if err != nil {
		return r, err
	}
	name := s.ScheduleName(k)
	if n, ok := d.Scheduler.(reconcile.Namer); ok {
		name = n.ScheduleName(k)
	}
	switch e, err := d.Schedules.Get(ctx, name, it.Due); {
	case errors.Is(err, timer.ErrNotFound):
		// A timer whose entries outlive their firing (Step Functions'
		// executions) says what became of it.
		if st, ok := d.Scheduler.(statuser); ok && !it.Due.IsZero() {
			if status, err := st.Status(ctx, name, it.Due); err == nil {
				r.EntryNote = "its execution is " + status
			}
		}
	case err != nil:
		return r, fmt.Errorf("read the timer entry %s: %w", name, err)
	default:
		r.Entry = &Entry{Name: e.Name, At: e.At, Detail: entryDetail(t, e.At, w.now())}
	}
	w.progress(3, 4, "reading the failure queues")
	if r.Messages, err = w.lettersFor(ctx, k); err != nil {
		return r, err
	}
	w.progress(4, 4, "asking the reconciler's rules")
	res, decided, err := plan(ctx, cfg, reconcile.Only(d, k))
	if err != nil {
		return r, fmt.Errorf("plan the item's repair: %w", err)
	}
	if rl, ok := d.Policy.(rules); ok {
		if v, text, problem, ok := rulesVerdict(decided, k, rl.name, found && s.Armed(it), r.Entry != nil); ok {
			r.Verdict, r.Explanation, r.Problem = v, text, problem
			w.withLetters(&r)
			return r, nil
		}
	}
	w.verdict(&r, t, it, res.Findings, cfg)
	return r, nil
}

// verdict says what the item comes to: first what the reconciler would
// repair, else what the item and its entry show.
func (w *World) verdict(r *WhyReport, t Table, it contract.Item, findings []reconcile.Finding, cfg reconcile.Config) {
	s, now := t.Schema, w.now()
	grace := cfg.Grace
	if grace <= 0 {
		grace = reconcile.DefaultGrace
	}
	sort.Slice(findings, func(i, j int) bool { return findings[i].Kind < findings[j].Kind })
	at := contract.FormatTime
	set := func(kind string, problem bool, format string, args ...any) {
		r.Verdict, r.Problem, r.Explanation = kind, problem, fmt.Sprintf(format, args...)
	}
	if len(findings) > 0 {
		f := findings[0]
		switch f.Kind {
		case reconcile.DriftMissing:
			set(VerdictMissing, true, "armed, due at %s, but its timer entry is missing: the reconciler recreates it on its next pass", at(it.Due))
		case reconcile.DriftOrphaned:
			set(VerdictOrphaned, true, "its timer entry %s is an orphan (the item is gone or no longer armed): the reconciler deletes it on its next pass", f.Schedule)
		case reconcile.DriftMisplaced:
			set(VerdictMisplaced, true, "armed, due at %s, but its timer entry is at %s: the reconciler moves it on its next pass", at(it.Due), at(f.At))
		case reconcile.DriftOverdue:
			set(VerdictOverdue, true, "armed, due at %s, more than the grace period (%s) ago, and not fired: the reconciler fires it on its next pass", at(it.Due), grace)
		case reconcile.DriftUndelivered:
			set(VerdictUndelivered, true, "claimed at %s but not delivered, and the lease has ended: the reconciler delivers it again on its next pass", at(it.ClaimAt))
		}
		if len(r.Messages) > 0 {
			r.Explanation += fmt.Sprintf("; %d message(s) about it wait in the failure queues", len(r.Messages))
		}
		return
	}
	switch {
	case !r.Found:
		set(VerdictNoItem, false, "no item with that key, and no timer entry")
	case s.Armed(it) && it.Due.After(now):
		set(VerdictArmed, false, "armed and due at %s on timer %s", at(it.Due), t.TimerName)
	case s.Armed(it):
		set(VerdictFiring, false, "armed and due at %s: its timer fires it now (the reconciler fires it once it is %s overdue)", at(it.Due), grace)
	case it.State == s.FiredState && it.Delivered:
		set(VerdictDelivered, false, "fired at %s and delivered at %s", orDash(r.Item[s.FiredAtAttr]), r.Item[s.DeliveredAtAttr])
	case s.Undelivered(it, it.Due):
		set(VerdictClaimed, false, "claimed at %s but not delivered yet: the lease ends at %s; then a retry, or the reconciler, delivers it",
			at(it.ClaimAt), at(it.ClaimAt.Add(w.lease(t))))
	case it.State == s.FiredState:
		set(VerdictCancelled, false, "cancelled: a writer set it to %s without the library's claim, so no firing delivers it", it.State)
	case it.Due.IsZero():
		set(VerdictCancelled, false, "cancelled: it has no due time (%s is empty or not a time)", s.DueAttr)
	default:
		set(VerdictCancelled, false, "cancelled: its state %s is not one of the armed states (%s)", orDash(it.State), strings.Join(s.ArmedStates, ", "))
	}
	w.withLetters(r)
}

// withLetters adds the failure queues' messages about the item to the
// verdict: a problem an operator redrives.
func (w *World) withLetters(r *WhyReport) {
	if len(r.Messages) > 0 {
		r.Problem = true
		r.Explanation += fmt.Sprintf("; %d message(s) about it wait in the failure queues (dlq redrive)", len(r.Messages))
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// entryDetail says what a timer entry at at is, on table t's timer, at
// now, as the timer's kind describes it (timerkind.Kind.Describe).
func entryDetail(t Table, at, now time.Time) string {
	if k, ok := timerkind.Lookup(t.Timer.Timer); ok && k.Describe != nil {
		return k.Describe(t.TimerName, at, now)
	}
	return "an entry due " + contract.FormatTime(at)
}

// statuser is a timer that tells what became of an entry it no longer
// runs (awssfn.Client).
type statuser interface {
	Status(ctx context.Context, name string, at time.Time) (string, error)
}
