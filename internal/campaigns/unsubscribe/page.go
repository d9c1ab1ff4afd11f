package unsubscribe

import (
	"context"
	"encoding/json"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/unschedule/unschedule/internal/campaigns/suppress"
	"github.com/unschedule/unschedule/internal/core/clock"
)

// Request is one call of the unsubscribe URL, as the Lambda's API
// Gateway event or the dev server's http.Request has it.
type Request struct {
	Method string
	// Token is the query's token parameter.
	Token string
	// Accept is the Accept header: application/json gets JSON answers.
	Accept string
}

// Response is the answer to write back.
type Response struct {
	Status  int
	Headers map[string]string
	Body    string
}

// Page serves the unsubscribe URL, public and without authentication as
// RFC 8058 requires (the token is the authority):
//
//   - POST (the mail client's one-click, body List-Unsubscribe=One-Click,
//     or the page's button) suppresses the token's address for its sender
//     and answers 200, again on a repeat;
//   - GET answers a small page whose button POSTs (a GET never
//     unsubscribes: link scanners follow links);
//   - a missing, malformed or forged token is a 400 that names the
//     problem, HTML or JSON; another method is a 405.
//
// https://www.rfc-editor.org/rfc/rfc8058#section-3.2
type Page struct {
	Keys  *Keys
	Store suppress.Store
	Clock clock.Clock
	Log   *slog.Logger
}

// Serve answers one request. A failure of the store or of the secret's
// load is a 503 (logged): the only 5xx, and never for the caller's input.
func (p *Page) Serve(ctx context.Context, r Request) Response {
	asJSON := strings.Contains(r.Accept, "application/json")
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		res := p.problem(asJSON, http.StatusMethodNotAllowed, "method", "use GET to see the unsubscribe page, POST to unsubscribe")
		res.Headers["Allow"] = "GET, POST"
		return res
	}
	if r.Token == "" {
		return p.problem(asJSON, http.StatusBadRequest, "token", "the token query parameter is required: use the whole link from the email")
	}
	signer, err := p.Keys.Signer(ctx)
	if err != nil {
		p.Log.ErrorContext(ctx, "unsubscribe: no secret to verify tokens with", "error", err.Error())
		return p.problem(asJSON, http.StatusServiceUnavailable, "", "the unsubscribe could not be checked just now: try again in a minute")
	}
	c, err := signer.Verify(r.Token)
	switch {
	case errors.Is(err, ErrBadSignature):
		return p.problem(asJSON, http.StatusBadRequest, "token", "the token's signature does not match: use the whole link from the email, unchanged")
	case err != nil:
		return p.problem(asJSON, http.StatusBadRequest, "token", "the token is malformed: use the whole link from the email, unchanged")
	}
	if r.Method == http.MethodGet {
		return p.page(asJSON, http.StatusOK, confirmPage(), c, r.Token, false)
	}
	added, err := p.Store.Add(ctx, suppress.Entry{Sender: c.Sender, Address: c.Address, Reason: suppress.Unsubscribe,
		At: p.Clock.Now().UTC(), Source: "campaign " + c.Campaign})
	if err != nil {
		p.Log.ErrorContext(ctx, "unsubscribe: the suppression list refused the write", "error", err.Error())
		return p.problem(asJSON, http.StatusServiceUnavailable, "", "the unsubscribe could not be saved just now: try again in a minute")
	}
	p.Log.InfoContext(ctx, "unsubscribed", "campaignId", c.Campaign, "new", added)
	return p.page(asJSON, http.StatusOK, donePage(), c, "", true)
}

func (p *Page) problem(asJSON bool, status int, field, msg string) Response {
	if asJSON {
		b, _ := json.Marshal(map[string]string{"error": msg, "field": field}) // strings always marshal
		return Response{Status: status, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(b)}
	}
	var sb strings.Builder
	_ = problemPage().Execute(&sb, msg) // a fixed template over a string
	return Response{Status: status, Headers: htmlHeaders(), Body: sb.String()}
}

func (p *Page) page(asJSON bool, status int, t *template.Template, c Claims, token string, done bool) Response {
	if asJSON {
		b, _ := json.Marshal(map[string]any{"address": c.Address, "unsubscribed": done})
		return Response{Status: status, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(b)}
	}
	var sb strings.Builder
	if err := t.Execute(&sb, map[string]string{"Address": c.Address, "Sender": c.Sender, "Token": token}); err != nil {
		return p.problem(false, http.StatusInternalServerError, "", "the page could not be shown")
	}
	return Response{Status: status, Headers: htmlHeaders(), Body: sb.String()}
}

// htmlHeaders: no caching (a page per token), no framing, no referrer
// (the URL holds the token).
func htmlHeaders() map[string]string {
	return map[string]string{"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store",
		"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"}
}

const head = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
	`<title>Unsubscribe</title><style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}</style></head><body>`

// The pages are parsed on first use, not at init: the send function links
// this package for its links and never renders a page, and every cold
// start pays for package init.
var (
	// The form posts to the same URL (the token stays in the query).
	confirmPage = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("confirm").Parse(head + `<h1>Unsubscribe</h1>` +
			`<p>Stop emails from {{.Sender}} to <strong>{{.Address}}</strong>?</p>` +
			`<form method="post" action="?token={{.Token}}"><input type="hidden" name="List-Unsubscribe" value="One-Click">` +
			`<button type="submit">Unsubscribe</button></form></body></html>`))
	})
	donePage = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("done").Parse(head + `<h1>Unsubscribed</h1>` +
			`<p><strong>{{.Address}}</strong> will get no more emails from {{.Sender}}.</p></body></html>`))
	})
	problemPage = sync.OnceValue(func() *template.Template {
		return template.Must(template.New("problem").Parse(head + `<h1>This unsubscribe link does not work</h1><p>{{.}}</p></body></html>`))
	})
)
