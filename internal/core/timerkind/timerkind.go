// Package timerkind is the registry of timer kinds, in the manner of
// database/sql's drivers: each kind (EventBridge Scheduler, Step
// Functions, TTL, ...) calls Register once, beside its adapter, with
// everything that varies by kind: how it reads its environment, builds
// its adapter, decodes what it hands the firing function, and stands in
// memory. Code that needs a kind asks the registry by name (Lookup,
// Parse, Names) instead of switching on it, so a new kind touches no
// line here or in its callers. The built-in kinds are registered by
// importing internal/core/adapters/timers.
package timerkind

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// Timer arms, moves and disarms items' schedules, and reads them: what a
// kind's adapter is.
type Timer interface {
	timer.Timer
	timer.Reader
}

// Standin is a kind's in-memory stand-in: the ports the worker, the API
// and the reconciler use, plus Fire, which hands over the schedules whose
// time came (their invocation of the firing function), and the views the
// checks read.
type Standin interface {
	Timer
	Fire(now time.Time) []contract.Schedule
	Lookup(name string) (contract.Schedule, bool)
	All() []contract.Schedule
}

// MemoryOptions are what a stand-in may need.
type MemoryOptions struct {
	// Now tells the time (nil: the system clock).
	Now func() time.Time
	// Delay picks how long after its due time each firing comes, for a
	// kind whose firing is lazy (nil: none).
	Delay func() time.Duration
	// Schema is the items' schema, when one is known (its zero value
	// otherwise).
	Schema contract.Schema
}

// Settings is what a kind read from a function's environment.
type Settings struct {
	// Schema is the schema of the items whose payloads the timer carries.
	Schema contract.Schema
	// Label names the timer's resource for an operator
	// ("stepfunctions:<machine>").
	Label string
	// Adapter is the kind's own configuration, handed back to New.
	Adapter any
}

// Firing is one firing found in an inbound event: an ID that names it in
// the answer, and the payload (contract.Schema.EncodePayload's).
type Firing struct {
	ID      string
	Payload json.RawMessage
}

// Batch is what a kind's decoder found in an inbound event: its firings,
// in order, and the answer to return when the firings of the IDs in
// failed did not go through (nil: none failed).
type Batch struct {
	Firings []Firing
	Answer  func(failed []string) any
}

// Kind is one timer kind.
type Kind struct {
	// Name is the value of UNSCHEDULE_TIMER that selects it.
	Name timerspec.Name
	// Spellings are the other names Parse accepts (the dev flags'
	// lower-case ones).
	Spellings []string
	// Default marks the kind an unset UNSCHEDULE_TIMER selects (one kind).
	Default bool
	// Load reads only the kind's variables; a missing one is recorded on
	// e (e.Err). Required.
	Load func(e *lambdaenv.Env) Settings
	// New builds the kind's adapter from what Load read. Required.
	New func(cfg aws.Config, s Settings) (Timer, error)
	// Decode reads what the kind hands the firing function: ok is false
	// when raw is not its event. Nil: the event is the payload itself.
	Decode func(raw json.RawMessage) (b Batch, ok bool)
	// Memory returns the kind's in-memory stand-in. Required.
	Memory func(o MemoryOptions) Standin
	// Describe, when set, says for an operator what an entry of the timer
	// called label, due at, is at now (nil: "an entry due <at>").
	Describe func(label string, at, now time.Time) string
	// Lateness, when set, refuses a lateness the kind cannot show (the
	// adopters' kit's Config.Late): nil accepts any.
	Lateness func(late time.Duration) error
	// The simulation's view of the kind's faults (internal/tooling/sim).

	// FiresWithin is how late after its due time the kind may fire at
	// worst (the TTL's 48 hours, its own lateness): zero means about on
	// time, and the simulation adds late firings of its own.
	FiresWithin time.Duration
	// FiresEarly: the kind may fire up to a minute before the due time
	// (EventBridge Scheduler's window).
	FiresEarly bool
	// KeepsStale: a move or cancel may leave a firing of another due time
	// running, which fires and the claim skips (Step Functions).
	KeepsStale bool
	// DuplicateFault names the simulation's fault of the kind firing one
	// schedule twice. Default: the simulation's generic one.
	DuplicateFault string
}

var (
	mu    sync.RWMutex
	kinds []Kind
)

// Register adds a kind. It panics, as sql.Register does, on a kind
// without a name, Load, New or Memory, and on a name or spelling taken.
func Register(k Kind) {
	mu.Lock()
	defer mu.Unlock()
	if k.Name == "" || k.Load == nil || k.New == nil || k.Memory == nil {
		panic(fmt.Sprintf("timerkind: Register(%q): a kind needs a Name, Load, New and Memory", k.Name))
	}
	for _, o := range kinds {
		for _, s := range append([]string{string(k.Name)}, k.Spellings...) {
			if o.accepts(s) {
				panic(fmt.Sprintf("timerkind: Register(%q): %q is already %s", k.Name, s, o.Name))
			}
		}
		if k.Default && o.Default {
			panic(fmt.Sprintf("timerkind: Register(%q): %s is already the default", k.Name, o.Name))
		}
	}
	kinds = append(kinds, k)
}

func (k Kind) accepts(v string) bool {
	return strings.EqualFold(v, string(k.Name)) || slices.ContainsFunc(k.Spellings, func(s string) bool { return strings.EqualFold(v, s) })
}

// Names lists the registered kinds, the default first, then in the order
// they registered.
func Names() []timerspec.Name {
	mu.RLock()
	defer mu.RUnlock()
	var out []timerspec.Name
	for _, k := range kinds {
		if k.Default {
			out = append([]timerspec.Name{k.Name}, out...)
		} else {
			out = append(out, k.Name)
		}
	}
	return out
}

// Lookup returns the kind called name ("" is the default kind).
func Lookup(name timerspec.Name) (Kind, bool) {
	mu.RLock()
	defer mu.RUnlock()
	for _, k := range kinds {
		if (name == "" && k.Default) || (name != "" && k.Name == name) {
			return k, true
		}
	}
	return Kind{}, false
}

// Must returns the kind called name, and panics when none registered
// (the package that registers it is not imported).
func Must(name timerspec.Name) Kind {
	k, ok := Lookup(name)
	if !ok {
		panic(fmt.Sprintf("timerkind: timer %q is not registered: import the package that registers it "+
			"(internal/core/adapters/timers registers the built-in ones)", name))
	}
	return k
}

// Parse reads a timer name or one of its spellings, case-insensitively
// ("" is the default kind).
func Parse(v string) (timerspec.Name, error) {
	mu.RLock()
	for _, k := range kinds {
		if (v == "" && k.Default) || (v != "" && k.accepts(v)) {
			mu.RUnlock()
			return k.Name, nil
		}
	}
	mu.RUnlock()
	names := make([]string, 0, len(kinds))
	for _, n := range Names() {
		names = append(names, string(n))
	}
	return "", fmt.Errorf("timer %q is unknown: use one of %s", v, strings.Join(names, ", "))
}

// NewStandin returns the in-memory stand-in of the kind called name.
func NewStandin(name timerspec.Name, o MemoryOptions) Standin {
	return Must(name).Memory(o)
}

// Invoke is the entry of a function a timer fires: raw is either an
// event a kind's decoder reads (a batch of firings, whose payloads go one
// by one through handle), or one firing's payload, handed to handle as it
// is. In a batch a failed payload ends the batch and is reported in the
// kind's answer: a batch's firings are ordered, and its source retries
// from that one. observe, when set, learns each batch payload's outcome.
// Only the kinds with a decoder need be registered in the firing
// function: the others hand over the payload itself.
func Invoke(ctx context.Context, raw json.RawMessage, handle func(context.Context, json.RawMessage) error, observe func(delivered bool)) (any, error) {
	mu.RLock()
	var decoders []func(json.RawMessage) (Batch, bool)
	for _, k := range kinds {
		if k.Decode != nil {
			decoders = append(decoders, k.Decode)
		}
	}
	mu.RUnlock()
	for _, d := range decoders {
		b, ok := d(raw)
		if !ok {
			continue
		}
		var failed []string
		for _, f := range b.Firings {
			err := handle(ctx, f.Payload)
			if observe != nil {
				observe(err == nil)
			}
			if err != nil {
				failed = append(failed, f.ID)
				break
			}
		}
		return b.Answer(failed), nil
	}
	return nil, handle(ctx, raw)
}
