// Package job holds the SDK-free rules of activity-driven deferred jobs
// (constructs/deferredjobs): one item per tenant and window, due at the
// window's moment (the next occurrence of a weekly time, Monday 03:00 UTC
// by default), and the job message the app's worker receives.
//
// The items are the scheduling core's (package contract, Schema): each
// writer's MarkActivity (package deferredjobs/writer) creates the
// tenant's item for the coming window once, whatever the number of
// activities; the core's TTL timer fires it some time after its due time,
// its conditional claim lets one firing through, and the construct's
// dispatcher turns that firing into one Job on the job queue. Tenants
// without activity get no item, so no job.
//
// The TTL timer is lazy: DynamoDB deletes an expired marker within a few
// days, typically within 48 hours
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html),
// and the core's reconciler fires an overdue item on its next pass. A job
// therefore runs some time after its window, never before: the claim
// refuses an item whose due time has not come.
package job

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
)

// Attribute names and states of an item: the table's partition key (the
// tenant), sort key (the window: RFC 3339 UTC of the occurrence), the due
// time (the same instant, the core's DueAttr) and the state.
const (
	TenantAttr   = "tenantId"
	WindowAttr   = "window"
	DueAttr      = "dueAt"
	StateAttr    = "status"
	PendingState = "Pending"
	FiredState   = "Fired"
	// SchedulePrefix starts the name of every item's timer (the TTL
	// marker's key).
	SchedulePrefix = "job-"
)

// Schema is the item contract the construct gives the core: key
// tenantId/window, due time dueAt, state status with Pending armed and
// Fired as the claim's state; the rest is contract.Default()'s.
func Schema() contract.Schema {
	return contract.Schema{
		PartitionKey: TenantAttr, SortKey: WindowAttr, DueAttr: DueAttr, StateAttr: StateAttr,
		ArmedStates: []string{PendingState}, FiredState: FiredState, ScheduleNamePrefix: SchedulePrefix,
	}.WithDefaults()
}

// The deferred jobs' environment variables, declared here, beside their
// code (the core's are in internal/core/envvars, which registers these).
const (
	// EnvTable is the items table's name, for an adopter's writer
	// (ConfigureWriter; deferredjobs/writer).
	EnvTable = "DEFERRED_JOBS_TABLE"
	// EnvWeekly is the weekly run time, for an adopter's writer.
	EnvWeekly = "DEFERRED_JOBS_WEEKLY"
	// EnvJobQueueURL is the job queue the dispatcher sends to
	// (internal/deferredjobs/jobdispatch).
	EnvJobQueueURL = "JOB_QUEUE_URL"
)

func init() { envvars.Register(EnvTable, EnvWeekly, EnvJobQueueURL) }

// Weekly is a weekly moment in UTC.
type Weekly struct {
	Weekday time.Weekday
	Hour    int
	Minute  int
}

// DefaultWeekly is Monday 03:00 UTC.
var DefaultWeekly = Weekly{Weekday: time.Monday, Hour: 3}

// ErrInvalid is a bad argument; test with errors.Is.
var ErrInvalid = errors.New("deferred job: invalid")

// Validate reports a moment out of range.
func (w Weekly) Validate() error {
	if w.Weekday < time.Sunday || w.Weekday > time.Saturday || w.Hour < 0 || w.Hour > 23 || w.Minute < 0 || w.Minute > 59 {
		return fmt.Errorf("%w: weekly time %d %02d:%02d: weekday 0..6 (Sunday..Saturday), hour 0..23, minute 0..59", ErrInvalid, w.Weekday, w.Hour, w.Minute)
	}
	return nil
}

// String is "MONDAY 03:00" (what ParseWeekly reads).
func (w Weekly) String() string {
	return fmt.Sprintf("%s %02d:%02d", strings.ToUpper(w.Weekday.String()), w.Hour, w.Minute)
}

// ParseWeekly reads "MONDAY 03:00" (any case; "" is DefaultWeekly).
func ParseWeekly(s string) (Weekly, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultWeekly, nil
	}
	var day string
	var w Weekly
	if _, err := fmt.Sscanf(s, "%s %d:%d", &day, &w.Hour, &w.Minute); err != nil {
		return Weekly{}, fmt.Errorf("%w: weekly time %q: write it as \"MONDAY 03:00\"", ErrInvalid, s)
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		if strings.EqualFold(d.String(), day) {
			w.Weekday = d
			return w, w.Validate()
		}
	}
	return Weekly{}, fmt.Errorf("%w: weekly time %q: unknown weekday %q", ErrInvalid, s, day)
}

// Next is the first occurrence of w strictly after now: activity at the
// very moment of a run belongs to the next week's window (the current one
// is being closed).
func (w Weekly) Next(now time.Time) time.Time {
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), w.Hour, w.Minute, 0, 0, time.UTC)
	ahead := (int(w.Weekday) - int(now.Weekday()) + 7) % 7
	next := day.AddDate(0, 0, ahead)
	if !next.After(now) {
		next = next.AddDate(0, 0, 7)
	}
	return next
}

// Item is one tenant's item for one window.
type Item struct {
	Tenant string
	// Window is the occurrence the item is due at.
	Window time.Time
}

// WindowKey is the sort key value: RFC 3339 UTC.
func (it Item) WindowKey() string { return contract.FormatTime(it.Window) }

// Key is the item's primary key in the core's terms.
func (it Item) Key() contract.Key { return contract.Key{Partition: it.Tenant, Sort: it.WindowKey()} }

// Attrs are the item as written: its key, its due time (the window) and
// the armed state, every value a string.
func (it Item) Attrs() map[string]string {
	return map[string]string{TenantAttr: it.Tenant, WindowAttr: it.WindowKey(), DueAttr: it.WindowKey(), StateAttr: PendingState}
}

// ItemFor is the item of activity by tenant at now. Every activity of a
// tenant before one occurrence gives the same item (created once), so the
// tenant gets one job per window however busy it was.
func ItemFor(tenant string, now time.Time, w Weekly) (Item, error) {
	if strings.TrimSpace(tenant) == "" {
		return Item{}, fmt.Errorf("%w: empty tenant", ErrInvalid)
	}
	if err := w.Validate(); err != nil {
		return Item{}, err
	}
	return Item{Tenant: tenant, Window: w.Next(now)}, nil
}

// Job is the message the worker receives: one tenant's window closed.
type Job struct {
	Tenant string    `json:"tenantId"`
	Window time.Time `json:"window"`
}

// ParseJob reads a job message body (an SQS record's body).
func ParseJob(body string) (Job, error) {
	var j Job
	if err := json.Unmarshal([]byte(body), &j); err != nil || j.Tenant == "" || j.Window.IsZero() {
		return Job{}, fmt.Errorf("%w: job message %.100q", ErrInvalid, body)
	}
	return j, nil
}

// FromPayload is the job of a fired item, from the payload the core's
// expiry function hands its target (Schema().EncodePayload:
// {"dueAt":…,"tenantId":…,"window":…}). A payload that is no item of
// Schema, or whose window and due time differ (an item not written by
// MarkActivity), is ErrInvalid.
func FromPayload(b []byte) (Job, error) {
	p, err := Schema().DecodePayload(b)
	if err != nil {
		return Job{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	w, err := time.Parse(time.RFC3339, p.Key.Sort)
	if p.Key.Partition == "" || err != nil || !w.Equal(p.Due) {
		return Job{}, fmt.Errorf("%w: payload %.200q is no deferred job (tenant, window = due time)", ErrInvalid, b)
	}
	return Job{Tenant: p.Key.Partition, Window: p.Due.UTC()}, nil
}

// The deferred-jobs dispatcher's function and metric names (the Function
// dimension and the metrics it writes as the core's Target), declared
// beside its code; the core's are in internal/core/metrics.
const (
	// FunctionDispatch is the dispatcher's Function dimension.
	FunctionDispatch = "deferreddispatch"
	// MetricQueued counts the jobs sent to the job queue.
	MetricQueued = "DeferredJobsQueued"
	// MetricMalformed counts the fired items that are no deferred job;
	// their firing fails.
	MetricMalformed = "DeferredJobsMalformed"
	// MetricQueueFailed counts the jobs the queue refused; their firing is
	// retried.
	MetricQueueFailed = "DeferredJobsQueueFailed"
)
