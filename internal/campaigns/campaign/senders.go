package campaign

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// ReasonSenderRemoved starts the cancel reason of a campaign whose owner
// may no longer send (removed from the sender group, disabled, deleted,
// or their address no longer proven): provisioning and the send function
// cancel it instead of going on.
const ReasonSenderRemoved = "senderRemoved"

// SenderCacheTTL is how long a warm function trusts an answer of a SenderCheck
// (CachedSenderCheck): the most a removal can lag behind before sends stop.
const SenderCacheTTL = 5 * time.Minute

// Verdict is whether a campaign's owner may send now, and if not why.
type Verdict struct {
	Allowed bool
	// Reason says why not (empty when Allowed): "not in group …",
	// "disabled", "deleted", "email not proven", ….
	Reason string
}

// Allow and Refuse build verdicts.
func Allow() Verdict { return Verdict{Allowed: true} }

// Refuse is a verdict that the owner may not send, for reason.
func Refuse(reason string) Verdict { return Verdict{Reason: reason} }

// CancelReason is the reason a refused owner's campaign is cancelled with.
func (v Verdict) CancelReason() string { return ReasonSenderRemoved + ": " + v.Reason }

// SenderCheck answers whether a campaign's owner (the user pool sub that
// created it) is still a sender: in AWS, an enabled user of the pool in
// the sender group whose current email address is proven
// (internal/campaigns/adapters/cognitosenders); in memory, a set.
type SenderCheck interface {
	// Sender returns the verdict on owner; an error only when it cannot
	// tell (the caller then does nothing and retries).
	Check(ctx context.Context, owner string) (Verdict, error)
}

// CachedSenderCheck remembers each owner's verdict for TTL, so a warm
// function asks the user pool at most once per owner per TTL. Errors are
// not remembered.
type CachedSenderCheck struct {
	check SenderCheck
	ttl   time.Duration
	clock Clock
	mu    sync.Mutex
	m     map[string]cachedVerdict
}

type cachedVerdict struct {
	v  Verdict
	at time.Time
}

// NewCachedSenderCheck caches s's answers for ttl (SenderCacheTTL when 0).
func NewCachedSenderCheck(s SenderCheck, ttl time.Duration, clock Clock) (*CachedSenderCheck, error) {
	if s == nil || clock == nil {
		return nil, errors.New("cached sender check: check and clock are required")
	}
	if ttl <= 0 {
		ttl = SenderCacheTTL
	}
	return &CachedSenderCheck{check: s, ttl: ttl, clock: clock, m: map[string]cachedVerdict{}}, nil
}

// Check implements SenderCheck.
func (c *CachedSenderCheck) Check(ctx context.Context, owner string) (Verdict, error) {
	now := c.clock.Now()
	c.mu.Lock()
	e, ok := c.m[owner]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.ttl && !now.Before(e.at) {
		return e.v, nil
	}
	v, err := c.check.Check(ctx, owner)
	if err != nil {
		return Verdict{}, err
	}
	c.mu.Lock()
	c.m[owner] = cachedVerdict{v: v, at: now}
	c.mu.Unlock()
	return v, nil
}

// CancelCampaign marks campaign id Cancelled with reason if it is still
// Draft, Provisioning or Active (a cancel already done stays as it is):
// the one campaign-level step of a cancel, shared by the canceller
// (campaigncancel) and the sender gate. The campaign's Pending tasks are
// then cancelled by whoever meets them: the canceller, the send function
// at each fire, the reconciler's pass (which deletes their schedules).
func CancelCampaign(ctx context.Context, cs Campaigns, id, reason string, now time.Time) error {
	if reason == "" {
		return errors.New("cancel: a reason is required")
	}
	err := cs.SetStatus(ctx, id, []Status{Draft, Provisioning, Active}, CampaignCancelled, reason, now)
	if err != nil && !errors.Is(err, ErrConditionFailed) {
		return fmt.Errorf("cancel %s: %w", id, err)
	}
	return nil
}

// SenderRemoved reports whether a campaign was cancelled by the sender
// gate (its CancelReason starts with ReasonSenderRemoved).
func SenderRemoved(c Campaign) bool {
	return c.Status == CampaignCancelled && strings.HasPrefix(c.CancelReason, ReasonSenderRemoved)
}

// Gate lets c go on only while its owner is a sender: a refused owner's
// campaign is cancelled (CancelCampaign, reason Verdict.CancelReason) and
// Gate returns false; an error means it could not tell, and nothing was
// done.
func Gate(ctx context.Context, s SenderCheck, cs Campaigns, c Campaign, now time.Time) (bool, error) {
	v, err := s.Check(ctx, c.OwnerID)
	if err != nil {
		return false, fmt.Errorf("check sender of campaign %s: %w", c.ID, err)
	}
	if v.Allowed {
		return true, nil
	}
	return false, CancelCampaign(ctx, cs, c.ID, v.CancelReason(), now)
}
