// Package metrics writes CloudWatch embedded metric format (EMF) records:
// one JSON line on stdout per flush, which CloudWatch Logs turns into
// metrics with no API call and no extra latency. It names the core's
// metrics and functions; each adopter names its own beside its code.
package metrics

import (
	"encoding/json"
	"io"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/core/envvars"
)

// Namespace is the CloudWatch namespace of every metric of this project.
const Namespace = "Unschedule"

// Recorder collects counts and values for one invocation and writes them
// as one EMF record. The zero value is not usable: call New.
type Recorder struct {
	mu       sync.Mutex
	w        io.Writer
	now      func() time.Time
	counts   map[string]float64
	units    map[string]string
	function string
	stack    string
}

// Dimension names of every metric.
const (
	DimensionStack    = "Stack"
	DimensionFunction = "Function"
)

// New returns a recorder for the named function that writes to w
// (os.Stdout when nil). Every metric carries the dimensions Stack (from
// the envvars.MetricsStack variable, which constructs/gofn sets on every function so two stacks in one account never share a metric) and Function.
func New(function string, w io.Writer) *Recorder {
	return NewForStack(os.Getenv(envvars.MetricsStack), function, w)
}

// NewForStack is New with the stack name given, not read from the
// environment.
func NewForStack(stack, function string, w io.Writer) *Recorder {
	if w == nil {
		w = os.Stdout
	}
	return &Recorder{w: w, now: clock.System{}.Now, function: function, stack: stack,
		counts: map[string]float64{}, units: map[string]string{}}
}

// Add adds n to a count metric.
func (r *Recorder) Add(name string, n float64) { r.put(name, n, "Count", true) }

// Set records a value with its CloudWatch unit ("Seconds", "Milliseconds",
// "Count", ...), replacing any earlier value of that name.
func (r *Recorder) Set(name string, v float64, unit string) { r.put(name, v, unit, false) }

func (r *Recorder) put(name string, v float64, unit string, add bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if add {
		r.counts[name] += v
	} else {
		r.counts[name] = v
	}
	r.units[name] = unit
}

// Flush writes the collected metrics as one EMF line and resets them. It
// writes nothing when nothing was recorded.
func (r *Recorder) Flush() error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.counts) == 0 {
		return nil
	}
	names := make([]string, 0, len(r.counts))
	for n := range r.counts {
		names = append(names, n)
	}
	sort.Strings(names)
	defs := make([]map[string]string, 0, len(names))
	rec := map[string]any{DimensionStack: r.stack, DimensionFunction: r.function}
	for _, n := range names {
		defs = append(defs, map[string]string{"Name": n, "Unit": r.units[n]})
		rec[n] = r.counts[n]
	}
	rec["_aws"] = map[string]any{
		"Timestamp": r.now().UnixMilli(),
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  Namespace,
			"Dimensions": [][]string{{DimensionStack, DimensionFunction}},
			"Metrics":    defs,
		}},
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	r.counts = map[string]float64{}
	r.units = map[string]string{}
	_, err = r.w.Write(append(b, '\n'))
	return err
}

// Function names of the core: the Function dimension of every metric,
// one per Lambda. Dashboards and alarms in the constructs use the same
// constants.
const (
	FunctionExpiry          = "expiry"
	FunctionStreamProcessor = "streamprocessor"
	FunctionCancelWorker    = "cancelworker"
	FunctionReconciler      = "reconciler"
)

// Lifecycle metric names shown on the dashboard.
const (
	ItemsFired  = "ItemsFired"
	Cancelled   = "Cancelled"
	Rescheduled = "Rescheduled"
	// DeliveryLagSeconds is, for each fired item, the time its target
	// ran (or its notification went) minus its due time: the firing
	// function writes it for every adopter's items, not only the to-do
	// app's.
	DeliveryLagSeconds = "DeliveryLagSeconds"
)
