// Package campaignapi maps the campaign REST routes onto the campaign
// core: create a campaign (recipients, subject, body, schedule rules),
// preview its plan without storing it, provision it (an asynchronous
// start of the provisioning function), cancel it, and read it with its
// counts per state and a page of its sends. The owner is the caller's
// Cognito sub, never a body field; another user's campaign is a 404.
// Only senders may call any route: members of the sender group (the
// token's cognito:groups) whose email address is verified (its
// email_verified); anyone else gets a JSON 403. Creating or provisioning
// a campaign also needs the address proven (custom:email_proof equal to
// the email claim), else a JSON 403.
// Bad input is a JSON 4xx that says how to fix it; internal errors are
// never echoed. Its Request and Response are the core's JSON API types
// (internal/core/httpapi, which the to-do API serves too), and it imports
// no AWS SDK.
package campaignapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigncancel"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/core/httpapi"
	"github.com/unschedule/unschedule/internal/core/identity"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/core/pagecursor"
)

// Routes (API Gateway resource paths); {id} is httpapi.Request.ID.
const (
	RouteCampaigns = "/campaigns"
	RoutePreview   = "/campaigns/preview"
	RouteCampaign  = "/campaigns/{id}"
	RouteProvision = "/campaigns/{id}/provision"
	RouteCancel    = "/campaigns/{id}/cancel"
)

// DefaultSenderGroup is the user pool group whose members may send
// campaigns (constructs/campaigns creates it; an administrator adds users).
const DefaultSenderGroup = campaign.DefaultSenderGroup

// Limits.
const (
	// MaxBody bounds a request body, 5 MiB: Lambda's synchronous payload
	// limit is 6 MB.
	MaxBody = 5 << 20
	// MaxRecipients bounds one campaign (plan.MaxRecipients, the one
	// limit of the planner and the API).
	MaxRecipients = plan.MaxRecipients
	// PreviewSends is how many sends a preview lists (all are planned).
	PreviewSends = 500
	// DefaultPage and MaxPage bound the sends one GET returns.
	DefaultPage = 100
	MaxPage     = 500
	// CancelBudget is the deadline of a cancel request without one in
	// its context (API Gateway waits 29 s); the canceller stops its own
	// margin before it, answers 202 and leaves the rest to the
	// reconciler. In Lambda the context's deadline is the function's.
	CancelBudget = 29 * time.Second
)

// Store is what the handler needs of the table (campaigntable.CampaignStore).
type Store interface {
	campaign.Tasks
	campaign.Campaigns
	Create(ctx context.Context, c campaign.Campaign, tasks []campaign.SendTask) error
	Complete(ctx context.Context, c campaign.Campaign) (bool, error)
	Counts(ctx context.Context, campaignID string) (map[campaign.State]int, error)
	// Owned reads a page of owner's campaigns (summaries), newest first.
	Owned(ctx context.Context, owner, cursor string, limit int) ([]campaign.Campaign, string, error)
}

// Starter starts provisioning a campaign (an asynchronous invoke of the
// provisioning function).
type Starter interface {
	Start(ctx context.Context, campaignID string) error
}

// Canceller cancels a campaign (campaigncancel.Canceller).
type Canceller interface {
	Cancel(ctx context.Context, campaignID, reason string, deadline time.Time) (campaigncancel.Result, error)
}

// Handler serves the campaign routes.
type Handler struct {
	store   Store
	cursors *pagecursor.Sealer
	starter Starter
	cancel  Canceller
	clock   campaign.Clock
	newID   func() string
	origins []string
	group   string
	log     *slog.Logger
	limits  Limiter // nil: no sender limits (WithLimits)
}

// New returns a handler whose callers must belong to senderGroup (see
// DefaultSenderGroup) and whose page cursors cursors seals; newID nil
// makes random ids.
func New(store Store, cursors *pagecursor.Sealer, starter Starter, c Canceller, clock campaign.Clock, newID func() string, origins []string, senderGroup string, log *slog.Logger) (*Handler, error) {
	if store == nil || cursors == nil || starter == nil || c == nil || clock == nil || log == nil || senderGroup == "" {
		return nil, errors.New("campaignapi: store, cursor sealer, starter, canceller, clock, sender group and logger are required")
	}
	if newID == nil {
		newID = func() string { return "c" + strings.ReplaceAll(campaign.NewToken(), "-", "")[:20] }
	}
	return &Handler{store: store, cursors: cursors, starter: starter, cancel: c, clock: clock, newID: newID, origins: origins, group: senderGroup, log: log}, nil
}

// Serve answers one request.
func (h *Handler) Serve(ctx context.Context, r httpapi.Request) httpapi.Response {
	return httpapi.CORS(h.route(ctx, r), h.origins, r.Origin)
}

// ServeAPIGateway is the Lambda handler body: a REST API proxy event in,
// its response out.
func (h *Handler) ServeAPIGateway(ctx context.Context, e events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	return httpapi.ServeAPIGateway(ctx, e, h.origins, h.Serve)
}

func (h *Handler) route(ctx context.Context, r httpapi.Request) httpapi.Response {
	if r.UserID == "" {
		return httpapi.Error(http.StatusUnauthorized, "unauthorized", "sign in first: the request carries no identity")
	}
	if resp := h.Authorize(ctx, r); resp != nil {
		return *resp
	}
	if len(r.Body) > MaxBody {
		return httpapi.Error(http.StatusRequestEntityTooLarge, "too_large", fmt.Sprintf("the body is %d bytes; at most %d (5 MiB): split the recipients over several campaigns", len(r.Body), MaxBody))
	}
	type route struct{ path, method string }
	switch (route{r.Route, r.Method}) {
	case route{RouteCampaigns, http.MethodPost}:
		if resp := h.requireProof(ctx, r); resp != nil {
			return *resp
		}
		return h.create(ctx, r, false)
	case route{RouteCampaigns, http.MethodGet}:
		return h.list(ctx, r)
	case route{RoutePreview, http.MethodPost}:
		return h.create(ctx, r, true)
	case route{RouteCampaign, http.MethodGet}:
		return h.get(ctx, r)
	case route{RouteProvision, http.MethodPost}:
		if resp := h.requireProof(ctx, r); resp != nil {
			return *resp
		}
		return h.provision(ctx, r)
	case route{RouteCancel, http.MethodPost}:
		return h.cancelCampaign(ctx, r)
	}
	switch r.Route {
	case RouteCampaigns, RoutePreview, RouteCampaign, RouteProvision, RouteCancel:
		return httpapi.Error(http.StatusMethodNotAllowed, "method_not_allowed", "method "+r.Method+" is not allowed here")
	}
	return httpapi.Error(http.StatusNotFound, "not_found", "no such route")
}

// Authorize lets only senders through: self sign-up is open, so any
// signed-in user could otherwise mail thousands of strangers from the
// stack's verified SES identity. Membership of the sender group is
// granted by an administrator only; the address must be verified by code
// (an auto-confirmed address proves nothing about who holds it). It
// returns the 403 to answer, or nil for a sender. Every campaign route
// checks it first, the progress stream of make dev included.
func (h *Handler) Authorize(ctx context.Context, r httpapi.Request) *httpapi.Response {
	var resp httpapi.Response
	switch {
	case !r.InGroup(h.group):
		resp = httpapi.Error(http.StatusForbidden, "forbidden", fmt.Sprintf("campaigns are for members of the %q user group: ask an administrator to add you, then sign in again", h.group))
	case !r.EmailVerified:
		resp = httpapi.Error(http.StatusForbidden, "forbidden", "your email address is not verified (email_verified is not true): verify it with the code sent to it, then sign in again")
	default:
		return nil
	}
	h.log.InfoContext(ctx, "campaign request refused", "user", r.UserID, "inGroup", r.InGroup(h.group), "emailVerified", r.EmailVerified)
	return &resp
}

// requireProof refuses to create or provision a campaign for a caller
// whose token does not show their current address proven by a code:
// custom:email_proof equal to the email claim, with email_verified
// (identity.EmailProven, the rule of the sender check). Provisioning would
// cancel such a campaign anyway (cognitosenders); refusing here says why
// before anything is stored. The claim comes with the ID token
// (constructs/userauth lets the web client read custom:email_proof), so
// this costs no Cognito call; a token issued before the proof was
// written shows none until it is refreshed or the user signs in again.
// Reading, previewing and cancelling stay open to the sender.
func (h *Handler) requireProof(ctx context.Context, r httpapi.Request) *httpapi.Response {
	verified := "false"
	if r.EmailVerified {
		verified = "true"
	}
	if identity.EmailProven(map[string]string{"email": r.Email, "email_verified": verified, identity.EmailProofAttribute: r.EmailProof}) {
		return nil
	}
	h.log.InfoContext(ctx, "campaign request refused: address not proven", "user", r.UserID, "route", r.Route, "hasProof", r.EmailProof != "")
	resp := httpapi.Error(http.StatusForbidden, "forbidden", "your email address is not proven with a code (custom:email_proof in your token does not name your current address): "+
		"reset your password once (\"Forgot your password?\": the code goes to your address), then sign in again")
	return &resp
}

// createJSON is the body of a create or preview.
type createJSON struct {
	Subject    string          `json:"subject"`
	Body       string          `json:"body"`
	Recipients []recipientJSON `json:"recipients"`
	Schedule   scheduleJSON    `json:"schedule"`
}

type recipientJSON struct {
	Email   string `json:"email"`
	Subject string `json:"subject,omitempty"`
}

// scheduleJSON is plan.Rules as people write them. SendsPerDay and
// Weekdays are pointers: only a missing (or null) field takes its
// default; an explicit value out of range is refused.
type scheduleJSON struct {
	SendsPerDay *int      `json:"sendsPerDay"`
	Weekdays    *[]string `json:"weekdays"`
	Windows     []string  `json:"windows"`
	TimeZone    string    `json:"timeZone"`
	StartDate   string    `json:"startDate"`
}

var weekdays = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}

// rules reads the schedule; every problem names its field and says how
// to fix it.
func (s scheduleJSON) rules() (plan.Rules, []string) {
	r := plan.Rules{SendsPerDay: plan.DefaultSendsPerDay, TimeZone: s.TimeZone,
		Weekdays: []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday}}
	var errs []string
	if s.SendsPerDay != nil {
		r.SendsPerDay = *s.SendsPerDay
		if r.SendsPerDay < 1 || r.SendsPerDay > plan.MaxSendsPerDay {
			errs = append(errs, fmt.Sprintf("schedule.sendsPerDay must be between 1 and %d (given %d): leave it out for the default, %d",
				plan.MaxSendsPerDay, r.SendsPerDay, plan.DefaultSendsPerDay))
		}
	}
	if s.Weekdays != nil {
		r.Weekdays = nil
		if len(*s.Weekdays) == 0 {
			errs = append(errs, "schedule.weekdays is empty: name at least one day (mon, tue, wed, thu, fri, sat, sun), or leave it out for Monday to Friday")
		}
		for _, d := range *s.Weekdays {
			wd, ok := weekdays[strings.ToLower(d[:min(len(d), 3)])]
			if !ok || (len(d) > 3 && !strings.EqualFold(d, wd.String())) {
				errs = append(errs, fmt.Sprintf("schedule.weekdays: %q is not a day: use mon, tue, wed, thu, fri, sat or sun", d))
				continue
			}
			r.Weekdays = append(r.Weekdays, wd)
		}
	}
	for _, w := range s.Windows {
		a, b, ok := strings.Cut(w, "-")
		start, err1 := plan.ParseClock(a)
		end, err2 := plan.ParseClock(b)
		if !ok || err1 != nil || err2 != nil {
			errs = append(errs, fmt.Sprintf("schedule.windows: %q must be HH:MM-HH:MM, such as 09:00-12:00", w))
			continue
		}
		r.Windows = append(r.Windows, plan.Window{Start: start, End: end})
	}
	if s.StartDate != "" {
		d, err := plan.ParseDate(s.StartDate)
		if err != nil {
			errs = append(errs, fmt.Sprintf("schedule.startDate %q must be YYYY-MM-DD", s.StartDate))
		}
		r.Start = d
	} else {
		errs = append(errs, "schedule.startDate is empty: set the first day to send, YYYY-MM-DD")
	}
	return r, errs
}

// decodeProblem says which field of the body is wrong and what it should
// be, from the decoder's error; it never echoes the error itself.
func decodeProblem(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("%s must be %s (given a JSON %s)", te.Field, jsonType(te.Type), strings.Fields(te.Value + " value")[0])
	case errors.As(err, &te):
		return fmt.Sprintf("the body must be a JSON object (given a JSON %s)", strings.Fields(te.Value + " value")[0])
	case errors.As(err, &se):
		return fmt.Sprintf("the body is not valid JSON (at byte %d): send one JSON object with subject, body, recipients and schedule", se.Offset)
	case errors.Is(err, io.EOF):
		return "the body is empty: send one JSON object with subject, body, recipients and schedule"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the body ends early: send one complete JSON object with subject, body, recipients and schedule"
	}
	// encoding/json's only other error here is `json: unknown field "x"`.
	if _, name, ok := strings.Cut(err.Error(), "unknown field "); ok {
		if n, uerr := strconv.Unquote(name); uerr == nil {
			return fmt.Sprintf("unknown field %q: the body has subject, body, recipients (email, subject) and schedule (sendsPerDay, weekdays, windows, timeZone, startDate); names are case-sensitive", n)
		}
	}
	return "the body must be one JSON object with subject, body, recipients and schedule (field names are case-sensitive)"
}

// jsonType names the JSON a Go type decodes from.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(jsonType(t.Elem()), "a "), "an ") + "s"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonType(t.Elem())
	case reflect.Bool:
		return "true or false"
	}
	return "a " + t.Kind().String()
}

func (h *Handler) create(ctx context.Context, r httpapi.Request, preview bool) httpapi.Response {
	var in createJSON
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return httpapi.Error(http.StatusBadRequest, "validation_error", decodeProblem(err))
	}
	if dec.More() {
		return httpapi.Error(http.StatusBadRequest, "validation_error", "the body must hold one JSON object, and nothing after it")
	}
	if err := exactNames(r.Body, reflect.TypeOf(in), ""); err != nil {
		return httpapi.Error(http.StatusBadRequest, "validation_error", err.Error())
	}
	if p := plan.RecipientsProblem(len(in.Recipients)); len(in.Recipients) > MaxRecipients {
		return httpapi.Error(http.StatusBadRequest, "validation_error", p) // before any work on them
	}
	rules, problems := in.Schedule.rules()
	if len(problems) > 0 {
		return httpapi.Error(http.StatusBadRequest, "validation_error", strings.Join(problems, "; "))
	}
	req := campaign.Request{Subject: in.Subject, Body: in.Body, Rules: rules}
	for _, rc := range in.Recipients {
		req.Recipients = append(req.Recipients, campaign.Recipient(rc))
	}
	now := h.clock.Now().UTC()
	c, tasks, err := campaign.Build(h.newID(), r.UserID, req, now, nil)
	var invalid *campaign.InvalidError
	if errors.As(err, &invalid) {
		return httpapi.Error(http.StatusBadRequest, "validation_error", strings.Join(invalid.Problems, "; "))
	}
	if err != nil {
		return httpapi.Internal(ctx, h.log, err)
	}
	if resp := h.limit(ctx, r.UserID, len(tasks), preview); resp != nil {
		return *resp
	}
	if preview {
		return httpapi.JSON(http.StatusOK, previewOf(c, tasks))
	}
	if err := h.store.Create(ctx, c, tasks); err != nil {
		return httpapi.Internal(ctx, h.log, err)
	}
	return httpapi.JSON(http.StatusCreated, campaignOf(c, countsOf(tasks), tasks[:min(len(tasks), DefaultPage)]))
}

// owned reads the caller's campaign; another user's is not found.
func (h *Handler) owned(ctx context.Context, r httpapi.Request) (campaign.Campaign, *httpapi.Response) {
	c, err := h.store.Campaign(ctx, r.ID)
	if errors.Is(err, campaign.ErrNotFound) || (err == nil && c.OwnerID != r.UserID) {
		resp := httpapi.Error(http.StatusNotFound, "not_found", "campaign not found")
		return c, &resp
	}
	if err != nil {
		resp := httpapi.Internal(ctx, h.log, err)
		return c, &resp
	}
	return c, nil
}

// list answers the caller's campaigns, newest first, a page at a time.
func (h *Handler) list(ctx context.Context, r httpapi.Request) httpapi.Response {
	limit := 20
	if v, ok := r.Query["limit"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return httpapi.Error(http.StatusBadRequest, "validation_error", fmt.Sprintf("limit must be between 1 and 100 (given %q)", v))
		}
		limit = n
	}
	// Sealed for this route and caller: the store's position (owner,
	// creation time, id) is never shown, and only what it handed out opens.
	scope := pagecursor.Scope{Route: RouteCampaigns, Owner: r.UserID}
	pos, err := h.cursors.Open(ctx, scope, r.Query["cursor"])
	if errors.Is(err, pagecursor.ErrInvalid) {
		return httpapi.Error(http.StatusBadRequest, "validation_error", pagecursor.Problem)
	}
	if err != nil {
		return httpapi.Internal(ctx, h.log, err)
	}
	page, next, err := h.store.Owned(ctx, r.UserID, pos, limit)
	if errors.Is(err, campaign.ErrBadCursor) {
		return httpapi.Error(http.StatusBadRequest, "validation_error", pagecursor.Problem)
	}
	if err != nil {
		return httpapi.Internal(ctx, h.log, err)
	}
	out := struct {
		Campaigns []summaryJSON `json:"campaigns"`
		Cursor    string        `json:"cursor,omitempty"`
	}{Campaigns: []summaryJSON{}}
	if out.Cursor, err = h.cursors.Seal(ctx, scope, next); err != nil {
		return httpapi.Internal(ctx, h.log, err)
	}
	for _, c := range page {
		out.Campaigns = append(out.Campaigns, summaryOf(c))
	}
	return httpapi.JSON(http.StatusOK, out)
}

func (h *Handler) get(ctx context.Context, r httpapi.Request) httpapi.Response {
	from, limit := 0, DefaultPage
	var bad []string
	// The position is an offset into the campaign's sends, sealed for
	// this caller and this campaign.
	scope := sendsScope(r)
	pos, err := h.cursors.Open(ctx, scope, r.Query["cursor"])
	switch {
	case errors.Is(err, pagecursor.ErrInvalid):
		bad = append(bad, pagecursor.Problem)
	case err != nil:
		return httpapi.Internal(ctx, h.log, err)
	case pos != "":
		n, err := strconv.Atoi(pos)
		if err != nil || n < 0 {
			bad = append(bad, pagecursor.Problem)
		}
		from = n
	}
	if v, ok := r.Query["limit"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPage {
			bad = append(bad, fmt.Sprintf("limit must be between 1 and %d (given %q)", MaxPage, v))
		}
		limit = n
	}
	if len(bad) > 0 {
		return httpapi.Error(http.StatusBadRequest, "validation_error", strings.Join(bad, "; "))
	}
	c, resp := h.owned(ctx, r)
	if resp != nil {
		return *resp
	}
	counts, err := h.store.Counts(ctx, c.ID)
	if err != nil {
		return httpapi.Internal(ctx, h.log, err)
	}
	if c, err = h.settle(ctx, c, counts); err != nil {
		return httpapi.Internal(ctx, h.log, err)
	}
	page, err := h.store.List(ctx, c.ID, from, limit)
	if err != nil {
		return httpapi.Internal(ctx, h.log, err)
	}
	out := campaignOf(c, counts, page)
	if len(page) > 0 && from+len(page) < c.Total {
		if out.Cursor, err = h.cursors.Seal(ctx, scope, strconv.Itoa(from+len(page))); err != nil {
			return httpapi.Internal(ctx, h.log, err)
		}
	}
	return httpapi.JSON(http.StatusOK, out)
}

// sendsScope is the query of a campaign's pages of sends.
func sendsScope(r httpapi.Request) pagecursor.Scope {
	return pagecursor.Scope{Route: RouteCampaign, Owner: r.UserID, Filter: r.ID}
}

// settle completes a Provisioning or Active campaign whose every task is
// terminal by the (consistent) counts: the store completes a campaign
// when it records its last task, and this repairs the case where that
// second write was lost. Terminal states are final, so the counts cannot
// go stale; the conditional write makes a race with the store harmless.
func (h *Handler) settle(ctx context.Context, c campaign.Campaign, counts map[campaign.State]int) (campaign.Campaign, error) {
	done := 0
	for _, s := range SendStates {
		if s.Terminal() {
			done += counts[s]
		}
	}
	if (c.Status != campaign.Provisioning && c.Status != campaign.Active) || c.Total == 0 || done < c.Total {
		return c, nil
	}
	now := h.clock.Now()
	err := h.store.SetStatus(ctx, c.ID, []campaign.Status{campaign.Provisioning, campaign.Active}, campaign.Completed, "", now)
	if err != nil && !errors.Is(err, campaign.ErrConditionFailed) {
		return c, err
	}
	if err == nil {
		h.log.InfoContext(ctx, "campaign completed on read", logfield.Key, campaign.CampaignItemKey(c.ID).String(), "campaign", c.ID)
		c.Status, c.UpdatedAt = campaign.Completed, now
	}
	return c, nil
}

// provision starts provisioning and answers 202 with the campaign as it
// is stored; a repeated provision (while it runs, or after it finished)
// answers the same way, without starting it again once it is Active.
func (h *Handler) provision(ctx context.Context, r httpapi.Request) httpapi.Response {
	c, resp := h.owned(ctx, r)
	if resp != nil {
		return *resp
	}
	switch c.Status {
	case campaign.CampaignCancelled:
		return httpapi.Error(http.StatusConflict, "cancelled", "the campaign is cancelled: create a new one")
	case campaign.Active, campaign.Completed:
		return httpapi.JSON(http.StatusAccepted, campaignOf(c, nil, nil))
	}
	complete, err := h.store.Complete(ctx, c)
	if err != nil {
		return httpapi.Internal(ctx, h.log, err)
	}
	if !complete {
		return httpapi.Error(http.StatusConflict, "incomplete", "the campaign's creation did not finish: create it again")
	}
	// Provisioning again while it runs is harmless: the runs share the
	// checkpoint and every create carries its task's token.
	if err := h.starter.Start(ctx, c.ID); err != nil {
		return httpapi.Internal(ctx, h.log, err)
	}
	return httpapi.JSON(http.StatusAccepted, campaignOf(c, nil, nil))
}

func (h *Handler) cancelCampaign(ctx context.Context, r httpapi.Request) httpapi.Response {
	c, resp := h.owned(ctx, r)
	if resp != nil {
		return *resp
	}
	if c.Status == campaign.Completed {
		return httpapi.Error(http.StatusConflict, "completed", "the campaign is completed: every send is done, nothing is left to cancel")
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = h.clock.Now().Add(CancelBudget)
	}
	key := campaign.CampaignItemKey(c.ID).String()
	res, err := h.cancel.Cancel(ctx, c.ID, "cancelled by its owner", deadline)
	if err != nil {
		return httpapi.Internal(ctx, h.log, err, logfield.Key, key, "campaign", c.ID)
	}
	status := http.StatusOK
	if res.Continue {
		status = http.StatusAccepted // the reconciler cancels the rest
	}
	h.log.InfoContext(ctx, "campaign cancelled by its owner", logfield.Key, key, "campaign", c.ID, "cancelled", res.Cancelled,
		"schedulesDeleted", res.SchedulesDeleted, "done", !res.Continue)
	return httpapi.JSON(status, cancelJSON{ID: c.ID, Status: string(campaign.CampaignCancelled), Cancelled: res.Cancelled,
		SchedulesDeleted: res.SchedulesDeleted, Done: !res.Continue})
}
