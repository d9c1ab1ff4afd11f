// Package deferredjobs is the client side of activity-driven deferred
// jobs (constructs/deferredjobs): DynamoDB TTL as a lazy
// scheduler. Each write of a tenant's activity upserts one marker for
// the tenant and the coming window (the next occurrence of a weekly time,
// Monday 03:00 UTC by default); the marker expires then, its TTL deletion
// arrives on the table's stream, and the construct queues one job per
// tenant and window for the app's worker. Tenants without activity get no
// marker, so no job.
//
// TTL is lazy: DynamoDB deletes an expired item within a few days,
// typically within 48 hours
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/howitworks-ttl.html).
// A job therefore runs some time after its window, never before.
package deferredjobs

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/envvars"
)

// Attribute names of a marker item: the table's partition key (the
// tenant), sort key (the window: RFC 3339 UTC of the occurrence) and TTL
// attribute (epoch seconds, as TTL requires:
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-before-you-start.html).
const (
	TenantAttr  = "tenantId"
	WindowAttr  = "window"
	ExpiresAttr = "expiresAt"
)

// Environment variables the construct sets on a writer (ConfigureWriter);
// their names live in internal/envvars with every other function variable.
const (
	EnvTable  = envvars.DeferredJobsTable
	EnvWeekly = envvars.DeferredJobsWeekly
)

// Weekly is a weekly moment in UTC.
type Weekly struct {
	Weekday time.Weekday
	Hour    int
	Minute  int
}

// DefaultWeekly is Monday 03:00 UTC.
var DefaultWeekly = Weekly{Weekday: time.Monday, Hour: 3}

// ErrInvalid is a bad argument; test with errors.Is.
var ErrInvalid = errors.New("deferredjobs: invalid")

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

// Marker is one tenant's marker for one window.
type Marker struct {
	Tenant string
	// Window is the occurrence the marker expires at.
	Window time.Time
}

// ExpiresAt is the marker's TTL value (epoch seconds).
func (m Marker) ExpiresAt() int64 { return m.Window.Unix() }

// WindowKey is the sort key value: RFC 3339 UTC.
func (m Marker) WindowKey() string { return m.Window.UTC().Format(time.RFC3339) }

// MarkerFor is the marker of activity by tenant at now. Every activity
// of a tenant before one occurrence gives the same marker (one item: an
// upsert), so the tenant gets one job per window however busy it was.
func MarkerFor(tenant string, now time.Time, w Weekly) (Marker, error) {
	if strings.TrimSpace(tenant) == "" {
		return Marker{}, fmt.Errorf("%w: empty tenant", ErrInvalid)
	}
	if err := w.Validate(); err != nil {
		return Marker{}, err
	}
	return Marker{Tenant: tenant, Window: w.Next(now)}, nil
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

// errNoKeys is a stream record without the marker's keys.
var errNoKeys = errors.New("not a marker")

// JobFromKeys is the job of a deleted marker, from its keys as a stream
// record carries them (string attributes).
func JobFromKeys(tenant, window string) (Job, error) {
	if tenant == "" || window == "" {
		return Job{}, fmt.Errorf("%w: %w: keys %q, %q", ErrInvalid, errNoKeys, tenant, window)
	}
	t, err := time.Parse(time.RFC3339, window)
	if err != nil {
		return Job{}, fmt.Errorf("%w: window %q: %w", ErrInvalid, window, err)
	}
	return Job{Tenant: tenant, Window: t.UTC()}, nil
}

// TTL deletions on a DynamoDB stream are REMOVE records whose userIdentity
// is {"type": "Service", "principalId": "dynamodb.amazonaws.com"}; a
// delete by a user or an application has no userIdentity.
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-streams.html
// Lambda filters on those fields of the record (the pattern's keys are
// the record's top-level fields: eventName, userIdentity, dynamodb):
// https://docs.aws.amazon.com/lambda/latest/dg/with-ddb-filtering.html
// The DynamoDB page above shows this very filter on userIdentity for TTL
// archiving, while the Lambda page notes that DynamoDB mappings filter on
// the "dynamodb" key only; should a deployment drop or refuse the
// userIdentity part, IsTTLDelete below still keeps a user's delete from
// becoming a job. In a global table only the region that ran TTL sets
// userIdentity, so the marker table is a single-region table.
const (
	TTLIdentityType      = "Service"
	TTLIdentityPrincipal = "dynamodb.amazonaws.com"
)

// TTLDeleteFilter is the event source mapping's filter pattern: TTL
// deletions only. The construct synthesizes exactly this pattern (a synth
// test pins it) and the dynalite test (internal/deferredjobs) evaluates it.
func TTLDeleteFilter() map[string]any {
	return map[string]any{
		"eventName": []any{"REMOVE"},
		"userIdentity": map[string]any{
			"type":        []any{TTLIdentityType},
			"principalId": []any{TTLIdentityPrincipal},
		},
	}
}

// TTLDeleteFilterJSON is TTLDeleteFilter as the JSON string Lambda stores.
func TTLDeleteFilterJSON() string {
	b, _ := json.Marshal(TTLDeleteFilter())
	return string(b)
}

// EnvJobQueueURL is the dispatcher's environment variable with the job
// queue's URL.
const EnvJobQueueURL = envvars.JobQueueURL
