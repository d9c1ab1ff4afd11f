// Package armedindex describes the armed index of a schedule-on-write
// table: a DynamoDB global secondary index whose sort key is the schema's
// due attribute and whose listed partitions hold every item the
// reconciler owes work, so a pass reads the armed items and not the
// table. The constructs render a Spec into the reconciler's environment
// (EnvVar); the DynamoDB adapter (dynamo.IndexedItems) and the in-memory
// stand-in read it. Why a GSI on the writer's own attributes:
// docs/decisions/armed-index.md.
package armedindex

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// EnvVar holds a Spec as JSON (Spec.EnvValue) on the reconciler; unset,
// the reconciler scans the table.
const EnvVar = envvars.ArmedIndex

// Defaults of Spec.
const (
	// DefaultName is the index the schedule-on-write construct adds to the
	// table it creates.
	DefaultName = "armed"
	// DefaultFiredWithinSec is how far back (by due time) a state-keyed
	// index is read for firings whose delivery is not recorded: one day.
	DefaultFiredWithinSec = 86400
)

// Spec is an armed index: a GSI keyed by PartitionAttr and, as sort key,
// the schema's due attribute (type S both). A pass queries each of
// Partitions (every item in them with a due time is listed, then checked
// by the reconciler as read).
//
// The default is state-keyed: PartitionAttr is the schema's StateAttr,
// and Partitions its ArmedStates, so DynamoDB keeps the index from the
// writer's own PutItem (no attribute to add, no extra write). Its
// FiredState partition holds every fired item ever, so it is read only
// for due times within FiredWithinSec.
//
// A sharded index is one whose partition attribute the writer sets only
// while the item is armed or fired and undelivered (the to-do app's
// "pending" index: pendingShard "0".."15"): Partitions are the shard
// values, and they hold the fired items too.
type Spec struct {
	// Name of the GSI. Default: DefaultName.
	Name string `json:"name"`
	// PartitionAttr is the index's partition key. Default: the schema's
	// StateAttr (a state-keyed index).
	PartitionAttr string `json:"partitionAttr,omitempty"`
	// Partitions are the partition key values a pass queries. Default:
	// the schema's ArmedStates for a state-keyed index; required for
	// another.
	Partitions []string `json:"partitions,omitempty"`
	// FiredWithinSec: a state-keyed index's FiredState partition is read
	// for due times within this many seconds before now (firings whose
	// delivery is not recorded; older ones are no longer retried by the
	// reconciler). Not for a sharded index, whose partitions hold them.
	// Default: DefaultFiredWithinSec.
	FiredWithinSec int `json:"firedWithinSec,omitempty"`
	// ConfirmedAttr, RepairAttr and UpdatedAttr, all three or none, let
	// the reconciler record a confirmed schedule on an item (reconcile.Marks):
	// ConfirmedAttr holds the due time whose schedule it checked,
	// RepairAttr "true" says a writer failed to create the schedule, and
	// UpdatedAttr is the writer's last-change time (RFC 3339), which must
	// be old enough (reconcile.Config.Settle) for a confirmation. A
	// writer's PutItem drops the confirmation, so a replaced item is
	// checked again. Default: none (every armed item's schedule is read
	// on every pass).
	ConfirmedAttr string `json:"confirmedAttr,omitempty"`
	RepairAttr    string `json:"repairAttr,omitempty"`
	UpdatedAttr   string `json:"updatedAttr,omitempty"`
}

// WithDefaults fills the defaults for schema s.
func (x Spec) WithDefaults(s contract.Schema) Spec {
	if x.Name == "" {
		x.Name = DefaultName
	}
	if x.PartitionAttr == "" {
		x.PartitionAttr = s.StateAttr
	}
	if x.StateKeyed(s) {
		if len(x.Partitions) == 0 {
			x.Partitions = slices.Clone(s.ArmedStates)
		}
		if x.FiredWithinSec == 0 {
			x.FiredWithinSec = DefaultFiredWithinSec
		}
	}
	return x
}

// StateKeyed reports whether the index is keyed by the schema's state.
func (x Spec) StateKeyed(s contract.Schema) bool { return x.PartitionAttr == s.StateAttr }

// Marks reports whether the reconciler records confirmations.
func (x Spec) Marks() bool { return x.ConfirmedAttr != "" }

// FiredWithin is FiredWithinSec as a duration.
func (x Spec) FiredWithin() time.Duration { return time.Duration(x.FiredWithinSec) * time.Second }

// Validate checks a spec after WithDefaults; its messages say what to
// set.
func (x Spec) Validate(s contract.Schema) error {
	var errs []error
	if x.PartitionAttr == s.DueAttr || x.PartitionAttr == s.PartitionKey || (!s.NoSortKey && x.PartitionAttr == s.SortKey) {
		errs = append(errs, fmt.Errorf("armed index %q: PartitionAttr %q is a key or the due attribute: use the state attribute %q (the default) or an attribute of its own",
			x.Name, x.PartitionAttr, s.StateAttr))
	}
	if len(x.Partitions) == 0 || len(x.Partitions) > 100 {
		errs = append(errs, fmt.Errorf("armed index %q: Partitions needs 1 to 100 values of %s (given %d): list the values the index's armed items use",
			x.Name, x.PartitionAttr, len(x.Partitions)))
	}
	if x.StateKeyed(s) {
		if slices.Contains(x.Partitions, s.FiredState) {
			errs = append(errs, fmt.Errorf("armed index %q: Partitions holds the fired state %q: leave it out (FiredWithinSec reads it)", x.Name, s.FiredState))
		}
		if x.FiredWithinSec < 60 || x.FiredWithinSec > 30*86400 {
			errs = append(errs, fmt.Errorf("armed index %q: FiredWithinSec must be 60..2592000 (given %d)", x.Name, x.FiredWithinSec))
		}
	} else if x.FiredWithinSec != 0 {
		errs = append(errs, fmt.Errorf("armed index %q: FiredWithinSec is for a state-keyed index only: a sharded index's partitions hold the fired items (given %d): unset it",
			x.Name, x.FiredWithinSec))
	}
	if n := countSet(x.ConfirmedAttr, x.RepairAttr, x.UpdatedAttr); n != 0 && n != 3 {
		errs = append(errs, fmt.Errorf("armed index %q: set ConfirmedAttr, RepairAttr and UpdatedAttr together, or none", x.Name))
	}
	if len(x.Name) < 3 || len(x.Name) > 255 {
		errs = append(errs, errors.New("armed index: Name must be 3-255 characters"))
	}
	return errors.Join(errs...)
}

func countSet(v ...string) int {
	n := 0
	for _, s := range v {
		if s != "" {
			n++
		}
	}
	return n
}

// Projected are the non-key attributes an index entry must carry for the
// reconciler to read an item from it (an INCLUDE projection; ALL works
// too): the contract's, the marks' when set, and a TTL marker's payload
// (timerspec.MarkerPayloadAttr: a state-keyed index holds the markers).
func (x Spec) Projected(s contract.Schema) []string {
	attrs := []string{s.TokenAttr, s.InlineAttr, s.FiredAtAttr, s.ClaimAtAttr, s.DeliveredAtAttr, timerspec.MarkerPayloadAttr}
	if x.PartitionAttr != s.StateAttr {
		attrs = append(attrs, s.StateAttr)
	}
	if s.Reminds() {
		attrs = append(attrs, s.RemindAttr, s.RemindClaimAtAttr, s.RemindedAttr)
	}
	for _, a := range []string{x.ConfirmedAttr, x.RepairAttr, x.UpdatedAttr} {
		if a != "" {
			attrs = append(attrs, a)
		}
	}
	return attrs
}

// Partition is one partition a pass queries, and the due times it reads.
type Partition struct {
	Value string
	// Since, when set, is the earliest due time read (the fired
	// partition of a state-keyed index).
	Since time.Time
}

// Listed are the partitions a pass queries at now, in order: the armed
// ones, then a state-keyed index's fired partition.
func (x Spec) Listed(s contract.Schema, now time.Time) []Partition {
	out := make([]Partition, 0, len(x.Partitions)+1)
	for _, v := range x.Partitions {
		out = append(out, Partition{Value: v})
	}
	if x.StateKeyed(s) {
		out = append(out, Partition{Value: s.FiredState, Since: now.Add(-x.FiredWithin())})
	}
	return out
}

// Holds reports whether an item with these attributes is in a partition
// a pass at now reads (as DynamoDB's index would hold it, once it caught
// up: both key attributes present, the due attribute compared as stored).
func (x Spec) Holds(s contract.Schema, attrs map[string]string, now time.Time) bool {
	due, ok := attrs[s.DueAttr]
	if !ok || due == "" {
		return false
	}
	pv, ok := attrs[x.PartitionAttr]
	if !ok || pv == "" {
		return false
	}
	for _, p := range x.Listed(s, now) {
		if p.Value == pv && (p.Since.IsZero() || due >= contract.FormatTime(p.Since)) {
			return true
		}
	}
	return false
}

// EnvValue renders the spec as EnvVar's JSON.
func (x Spec) EnvValue() string {
	b, _ := json.Marshal(x) // strings, ints and a slice always marshal
	return string(b)
}

// Parse reads EnvVar's value for schema s (defaults filled, validated);
// ok is false when it is empty (no index: scan).
func Parse(v string, s contract.Schema) (x Spec, ok bool, err error) {
	if strings.TrimSpace(v) == "" {
		return Spec{}, false, nil
	}
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&x); err != nil {
		return Spec{}, false, fmt.Errorf("%s: not an armed index spec: %w", EnvVar, err)
	}
	x = x.WithDefaults(s)
	if err := x.Validate(s); err != nil {
		return Spec{}, false, fmt.Errorf("%s: %w", EnvVar, err)
	}
	return x, true, nil
}
