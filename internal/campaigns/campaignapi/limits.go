package campaignapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/core/httpapi"
)

// Limiter is what the handler needs of the senders' abuse limits
// (limits.Limiter).
type Limiter interface {
	// Check refuses a campaign over the recipients per campaign; it
	// counts nothing.
	Check(recipients int) error
	// Admit counts a new campaign of sends sends for sender, or refuses
	// it with a *limits.Exceeded.
	Admit(ctx context.Context, sender string, sends int) error
}

// WithLimits makes h answer 429 to a create or preview over l's limits
// (a preview is checked, a create is counted). Without it, or with nil,
// only the API's hard limits apply.
func (h *Handler) WithLimits(l Limiter) *Handler {
	h.limits = l
	return h
}

// limit is the create route's hook: nil lets the request through, else
// the response to answer. sends is the campaign's sends, one per
// recipient.
func (h *Handler) limit(ctx context.Context, sender string, sends int, preview bool) *httpapi.Response {
	if h.limits == nil {
		return nil
	}
	var err error
	if preview {
		err = h.limits.Check(sends)
	} else {
		err = h.limits.Admit(ctx, sender, sends)
	}
	var e *limits.Exceeded
	switch {
	case err == nil:
		return nil
	case errors.As(err, &e):
		h.log.InfoContext(ctx, "campaign over a limit", "user", sender, "limit", string(e.Limit), "max", e.Max, "used", e.Used, "requested", e.Requested)
		resp := tooMany(e)
		return &resp
	}
	resp := httpapi.Internal(ctx, h.log, err) // the counters failed: refuse, never let it through uncounted
	return &resp
}

// limitJSON is the body of a 429: which limit, its value, the caller's
// use of it today and what the request asked for, and when to retry.
type limitJSON struct {
	Error             string `json:"error"`
	Message           string `json:"message"`
	Limit             string `json:"limit"`
	Max               int    `json:"max"`
	Used              int    `json:"used"`
	Requested         int    `json:"requested"`
	RetryAfterSeconds int    `json:"retryAfterSeconds,omitempty"`
}

// tooMany is the JSON 429 of a refusal, with Retry-After (seconds, RFC
// 9110 section 10.2.3) when waiting helps. A browser reads Retry-After
// across origins only when the response exposes it.
func tooMany(e *limits.Exceeded) httpapi.Response {
	b, _ := json.Marshal(limitJSON{Error: "limit_exceeded", Message: e.Error(), Limit: string(e.Limit), Max: e.Max, Used: e.Used,
		Requested: e.Requested, RetryAfterSeconds: int(e.RetryAfter.Seconds())})
	resp := httpapi.Response{Status: http.StatusTooManyRequests, Body: b, Headers: httpapi.Headers()}
	if e.RetryAfter > 0 {
		resp.Headers["Retry-After"] = strconv.Itoa(int(e.RetryAfter.Seconds()))
		resp.Headers["Access-Control-Expose-Headers"] = "Retry-After"
	}
	return resp
}
