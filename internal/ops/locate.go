package ops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// ErrNoSuchKey: a key that is in none of the tables that could hold it
// (no item, no timer entry): the operator names a table with --table.
var ErrNoSuchKey = errors.New("no item and no timer entry with that key")

// locate is the table key text names an item of: table (a physical or
// logical name) when given; else, among the tables whose schema the key
// fits, the only one, or the one holding the item or its timer entry.
// A key held by several tables, or by none of several, is an error that
// wraps ErrUsage and names them (with ErrNoSuchKey for none).
func (w *World) locate(ctx context.Context, table, keyText string) (Table, contract.Key, error) {
	if table != "" || len(w.Stack.Tables) == 1 {
		t, err := w.Stack.Table(table)
		if err != nil {
			return Table{}, contract.Key{}, fmt.Errorf("%w: %w", ErrUsage, err)
		}
		k, err := ParseKey(t.Schema, keyText)
		return t, k, err
	}
	if len(w.Stack.Tables) == 0 {
		return Table{}, contract.Key{}, errors.New("the stack has no item table (no function carries TABLE_NAME and the item schema)")
	}
	type fit struct {
		t Table
		k contract.Key
	}
	var fits, held []fit
	var names []string
	for _, t := range w.Stack.Tables {
		k, err := ParseKey(t.Schema, keyText)
		if err != nil {
			continue
		}
		fits = append(fits, fit{t, k})
		names = append(names, t.Name)
		ok, err := w.holds(ctx, t, k)
		if err != nil {
			return Table{}, contract.Key{}, err
		}
		if ok {
			held = append(held, fit{t, k})
		}
	}
	switch {
	case len(fits) == 0:
		return Table{}, contract.Key{}, fmt.Errorf("%w: key %q fits no table's key schema", ErrUsage, keyText)
	case len(fits) == 1:
		return fits[0].t, fits[0].k, nil
	case len(held) == 1:
		return held[0].t, held[0].k, nil
	case len(held) == 0:
		return Table{}, contract.Key{}, fmt.Errorf("%w: %w in tables %s: name one with --table", ErrUsage, ErrNoSuchKey, strings.Join(names, ", "))
	}
	names = names[:0]
	for _, h := range held {
		names = append(names, h.t.Name)
	}
	return Table{}, contract.Key{}, fmt.Errorf("%w: key %q is in tables %s: name one with --table", ErrUsage, keyText, strings.Join(names, ", "))
}

// holds says whether table t has the item k or a timer entry for it.
func (w *World) holds(ctx context.Context, t Table, k contract.Key) (bool, error) {
	if _, found, err := w.backend().Item(ctx, t, k); err != nil || found {
		return found, err
	}
	_, d, err := w.reconciler(t)
	if err != nil {
		// A table whose wiring cannot be read holds no entry we can see;
		// why on that table (--table) says what is wrong with it.
		return false, nil
	}
	name := t.Schema.ScheduleName(k)
	if n, ok := d.Scheduler.(reconcile.Namer); ok {
		name = n.ScheduleName(k)
	}
	switch _, err := d.Schedules.Get(ctx, name, time.Time{}); {
	case errors.Is(err, timer.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read the timer entry %s of table %s: %w", name, t.Name, err)
	}
	return true, nil
}
