package ops

import (
	"context"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// DriftSamples is how many findings of each kind a report shows.
const DriftSamples = 5

// DriftKindReport is one kind of drift: how many, and a few samples.
type DriftKindReport struct {
	Kind    reconcile.DriftKind `json:"kind"`
	Count   int                 `json:"count"`
	Samples []DriftSample       `json:"samples"`
}

// DriftSample is one finding.
type DriftSample struct {
	Key      string `json:"key,omitempty"`
	Schedule string `json:"schedule,omitempty"`
	At       string `json:"at,omitempty"`
	Due      string `json:"due,omitempty"`
}

// DriftReport is a table's drift: what the reconciler would repair, or
// (Repaired) what one pass did.
type DriftReport struct {
	Table    string            `json:"table"`
	Timer    string            `json:"timer"`
	Kinds    []DriftKindReport `json:"kinds"`
	Total    int               `json:"total"`
	Repaired *reconcile.Result `json:"repaired,omitempty"`
}

// Drift is the reconciler's plan for table t (every table when ""),
// without acting (reconcile.Plan); key narrows it to one item.
func (w *World) Drift(ctx context.Context, table, key string) ([]DriftReport, error) {
	return w.eachTable(ctx, table, key, func(cfg reconcile.Config, d reconcile.Deps, r *DriftReport) error {
		res, _, err := plan(ctx, cfg, d)
		if err != nil {
			return err
		}
		r.fill(res.Findings)
		return nil
	})
}

// Repair runs one pass of the reconciler on table t, with the code and
// the wiring of the reconciler function (reconcile.Run over the same
// adapters), from the start of a pass and with a scratch checkpoint, so
// the function's own checkpoint is left as it is; key narrows it to one
// item. The report lists what the pass found before it repaired.
func (w *World) Repair(ctx context.Context, table, key string) ([]DriftReport, error) {
	return w.eachTable(ctx, table, key, func(cfg reconcile.Config, d reconcile.Deps, r *DriftReport) error {
		res, _, err := plan(ctx, cfg, d)
		if err != nil {
			return err
		}
		r.fill(res.Findings)
		if key == "" {
			d.Checkpoints = scratch{} // the function's own is left as it is
		}
		cfg.Budget = time.Hour
		rec, err := reconcile.New(cfg, d)
		if err != nil {
			return err
		}
		done, err := rec.Run(ctx)
		r.Repaired = &done
		return err
	})
}

func (w *World) eachTable(ctx context.Context, table, key string, do func(reconcile.Config, reconcile.Deps, *DriftReport) error) ([]DriftReport, error) {
	tables := w.Stack.Tables
	var k contract.Key
	switch {
	case key != "":
		t, kk, err := w.locate(ctx, table, key)
		if err != nil {
			return nil, err
		}
		tables, k = []Table{t}, kk
	case table != "":
		t, err := w.Stack.Table(table)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		tables = []Table{t}
	}
	var out []DriftReport
	for i, t := range tables {
		w.progress(i, len(tables), "checking "+t.Name)
		cfg, d, err := w.reconciler(t)
		if err != nil {
			return out, err
		}
		if key != "" {
			d = reconcile.Only(d, k)
		}
		r := DriftReport{Table: t.Name, Timer: t.TimerName}
		if err := do(cfg, w.counting(d, t.Name), &r); err != nil {
			return out, fmt.Errorf("table %s: %w", t.Name, err)
		}
		out = append(out, r)
	}
	w.progress(len(tables), len(tables), "done")
	return out, nil
}

func (r *DriftReport) fill(fs []reconcile.Finding) {
	by := map[reconcile.DriftKind]*DriftKindReport{}
	for _, k := range reconcile.DriftKinds {
		r.Kinds = append(r.Kinds, DriftKindReport{Kind: k, Samples: []DriftSample{}})
	}
	for i := range r.Kinds {
		by[r.Kinds[i].Kind] = &r.Kinds[i]
	}
	for _, f := range fs {
		k := by[f.Kind]
		k.Count++
		r.Total++
		if len(k.Samples) < DriftSamples {
			s := DriftSample{Schedule: f.Schedule}
			if f.Key != (contract.Key{}) {
				s.Key = f.Key.String()
			}
			if !f.At.IsZero() {
				s.At = contract.FormatTime(f.At)
			}
			if !f.Due.IsZero() {
				s.Due = contract.FormatTime(f.Due)
			}
			k.Samples = append(k.Samples, s)
		}
	}
}

// scratch is a checkpoint that starts a whole pass and keeps nothing.
type scratch struct{}

func (scratch) Load(context.Context) (reconcile.Checkpoint, error) {
	return reconcile.Checkpoint{}, nil
}
func (scratch) Save(context.Context, reconcile.Checkpoint) error { return nil }

// counting reports, as a pass reads them, how many items and timer
// entries it has listed: a pass over a large table takes minutes.
func (w *World) counting(d reconcile.Deps, table string) reconcile.Deps {
	if w.Progress == nil {
		return d
	}
	c := &counts{report: func(items, entries int) {
		w.progress(items+entries, 0, fmt.Sprintf("%s: %d items, %d timer entries read", table, items, entries))
	}}
	ci := countingItems{Items: d.Items, c: c}
	d.Items = ci
	if m, ok := ci.Items.(reconcile.Marks); ok {
		d.Items = countingMarks{ci, m}
	}
	d.Schedules = countingReader{Reader: d.Schedules, c: c}
	return d
}

type counts struct {
	items, entries int
	report         func(items, entries int)
}

type countingItems struct {
	reconcile.Items
	c *counts
}

func (ci countingItems) List(ctx context.Context, req reconcile.ListRequest) (reconcile.ItemPage, error) {
	p, err := ci.Items.List(ctx, req)
	ci.c.items += len(p.Items)
	ci.c.report(ci.c.items, ci.c.entries)
	return p, err
}

// countingMarks keeps the store's Marks, so a repair records what it
// confirmed as the function does.
type countingMarks struct {
	countingItems
	reconcile.Marks
}

type countingReader struct {
	timer.Reader
	c *counts
}

func (cr countingReader) List(ctx context.Context, page timer.PageRequest) (timer.Page, error) {
	p, err := cr.Reader.List(ctx, page)
	cr.c.entries += len(p.Schedules)
	cr.c.report(cr.c.items, cr.c.entries)
	return p, err
}
