// Package limits holds the abuse limits of campaign senders: how many
// campaigns one sender may create per UTC day, how many sends those
// campaigns may schedule per UTC day, and how many recipients one
// campaign may have. The day's counts live behind Counters (DynamoDB in
// a deployed stack, internal/tooling/memory.SenderLimits in tests and
// dev); each admission is one atomic conditional add of every count,
// never a read then a write.
// No SDK here: the construct reads the defaults and ceilings.
package limits

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/unschedule/unschedule/internal/core/clock"
)

// Defaults and hard ceilings of Limits (constructs/campaigns props).
const (
	DefaultCampaignsPerDay       = 20
	DefaultSendsPerDay           = 20_000
	DefaultRecipientsPerCampaign = MaxRecipientsPerCampaign

	// MaxRecipientsPerCampaign is the API's hard limit on one campaign
	// (campaignapi.MaxRecipients: its tasks are written within API
	// Gateway's 29 s); a sender's limit can only be lower.
	MaxRecipientsPerCampaign = 10_000
	// MaxCampaignsPerDay and MaxSendsPerDay bound the per-day limits: past
	// them a limit no longer limits anything an abuser would notice.
	MaxCampaignsPerDay = 10_000
	MaxSendsPerDay     = 10_000_000
)

// Limit names one limit, as the API's 429 body names it.
type Limit string

// The limits.
const (
	CampaignsPerDay       Limit = "campaignsPerDay"
	SendsPerDay           Limit = "sendsPerDay"
	RecipientsPerCampaign Limit = "recipientsPerCampaign"
)

// Counter names in a sender's day item, and the item's TTL attribute
// (the campaign table's TimeToLiveAttribute, epoch seconds).
const (
	CounterCampaigns = "campaigns"
	CounterSends     = "sends"
	ExpiresAttr      = "expiresAt"
)

// Limits are one sender's limits. A day is a UTC calendar day.
type Limits struct {
	CampaignsPerDay, SendsPerDay, RecipientsPerCampaign int
}

// Defaults are the limits a construct uses when its props leave them unset.
func Defaults() Limits {
	return Limits{CampaignsPerDay: DefaultCampaignsPerDay, SendsPerDay: DefaultSendsPerDay, RecipientsPerCampaign: DefaultRecipientsPerCampaign}
}

// Ceilings are the largest values each limit takes.
func Ceilings() Limits {
	return Limits{CampaignsPerDay: MaxCampaignsPerDay, SendsPerDay: MaxSendsPerDay, RecipientsPerCampaign: MaxRecipientsPerCampaign}
}

// Validate reports each limit outside 1..its ceiling.
func (l Limits) Validate() error {
	var errs []error
	c := Ceilings()
	for _, f := range []struct {
		name   Limit
		v, max int
	}{{CampaignsPerDay, l.CampaignsPerDay, c.CampaignsPerDay}, {SendsPerDay, l.SendsPerDay, c.SendsPerDay},
		{RecipientsPerCampaign, l.RecipientsPerCampaign, c.RecipientsPerCampaign}} {
		if f.v < 1 || f.v > f.max {
			errs = append(errs, fmt.Errorf("%s must be between 1 and %d (given %d)", f.name, f.max, f.v))
		}
	}
	return errors.Join(errs...)
}

// Exceeded is the refusal of a request over a limit.
type Exceeded struct {
	Limit Limit
	// Max is the limit; Used is what the sender has used of it today
	// (per-day limits), Requested what the request asked for.
	Max, Used, Requested int
	// RetryAfter is how long until the limit allows the request again
	// (the next UTC day); 0 when waiting does not help.
	RetryAfter time.Duration
}

func (e *Exceeded) Error() string {
	switch e.Limit {
	case CampaignsPerDay:
		return fmt.Sprintf("you have created %d of your %d campaigns for today (UTC): create more after midnight UTC", e.Used, e.Max)
	case SendsPerDay:
		if e.RetryAfter == 0 {
			return fmt.Sprintf("a campaign of %d sends is over your %d sends per day (UTC): send to fewer recipients", e.Requested, e.Max)
		}
		return fmt.Sprintf("this campaign's %d sends would take you past your %d sends for today (UTC; %d used): send to fewer recipients, or create it after midnight UTC",
			e.Requested, e.Max, e.Used)
	}
	return fmt.Sprintf("a campaign has at most %d recipients (given %d): split them over several campaigns", e.Max, e.Requested)
}

// Key is one sender's counters of one UTC day.
type Key struct {
	Sender string
	Day    string // YYYY-MM-DD, UTC
}

// Add is one counter of a Key and how much to add to it, at most up to Max.
type Add struct {
	Counter string
	By, Max int64
}

// Counters keeps each sender's counts per day.
type Counters interface {
	// Add adds every By to its counter of key, all or none, only when
	// each counter stays at most its Max (a missing counter is 0); an
	// add whose By alone is over its Max is refused. A refusal answers
	// ok false with the counters' current values. expires is when the
	// store may forget key (after its day).
	Add(ctx context.Context, key Key, expires time.Time, adds []Add) (current map[string]int64, ok bool, err error)
}

// Limiter applies Limits to senders.
type Limiter struct {
	limits   Limits
	counters Counters
	clock    clock.Reader
}

// New returns a limiter of valid limits.
func New(l Limits, c Counters, now clock.Reader) (*Limiter, error) {
	if c == nil || now == nil {
		return nil, errors.New("limits: counters and clock are required")
	}
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("limits: %w", err)
	}
	return &Limiter{limits: l, counters: c, clock: now}, nil
}

// Limits are the limiter's limits.
func (l *Limiter) Limits() Limits { return l.limits }

// Check refuses a campaign of more recipients than one may have; it
// counts nothing (a preview).
func (l *Limiter) Check(recipients int) error {
	if recipients > l.limits.RecipientsPerCampaign {
		return &Exceeded{Limit: RecipientsPerCampaign, Max: l.limits.RecipientsPerCampaign, Requested: recipients}
	}
	return nil
}

// Admit counts a new campaign of sends sends (one per recipient) for
// sender today, or refuses it with an *Exceeded and counts nothing.
// Another error is the store's: the request is refused too (the limiter
// never lets a request through uncounted).
func (l *Limiter) Admit(ctx context.Context, sender string, sends int) error {
	if err := l.Check(sends); err != nil {
		return err
	}
	if sends > l.limits.SendsPerDay { // no day would take it: waiting does not help
		return &Exceeded{Limit: SendsPerDay, Max: l.limits.SendsPerDay, Requested: sends}
	}
	now := l.clock.Now().UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	next := day.AddDate(0, 0, 1)
	retry := (next.Sub(now) + time.Second - 1).Truncate(time.Second) // whole seconds, rounded up: never early
	adds := []Add{
		{Counter: CounterCampaigns, By: 1, Max: int64(l.limits.CampaignsPerDay)},
		{Counter: CounterSends, By: int64(sends), Max: int64(l.limits.SendsPerDay)},
	}
	// The store may forget a day a day after it ends: the key names its
	// day, so a late deletion changes nothing, and none comes early.
	current, ok, err := l.counters.Add(ctx, Key{Sender: sender, Day: day.Format(time.DateOnly)}, next.AddDate(0, 0, 1), adds)
	if err != nil {
		return fmt.Errorf("limits: count sender %s: %w", sender, err)
	}
	if ok {
		return nil
	}
	limit := map[string]Limit{CounterCampaigns: CampaignsPerDay, CounterSends: SendsPerDay}
	for _, a := range adds {
		if current[a.Counter]+a.By > a.Max {
			return &Exceeded{Limit: limit[a.Counter], Max: int(a.Max), Used: int(current[a.Counter]), Requested: int(a.By), RetryAfter: retry}
		}
	}
	// Counts only grow within a day: a refusal whose counts now fit was a
	// refusal of the campaigns counter by a store that could not say more.
	return &Exceeded{Limit: CampaignsPerDay, Max: l.limits.CampaignsPerDay, Used: int(current[CounterCampaigns]), Requested: 1, RetryAfter: retry}
}
