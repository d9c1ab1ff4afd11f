package campaigndev

import (
	"crypto/rand"
	"fmt"
	"net/http"

	"github.com/unschedule/unschedule/internal/campaign/send"
	"github.com/unschedule/unschedule/internal/campaign/suppress"
	"github.com/unschedule/unschedule/internal/campaign/unsubscribe"
)

// DevSender is the From address of make dev's campaign emails: whose
// suppression list the runtime keeps.
const DevSender = "campaigns@localhost"

// DefaultUnsubscribeBase is the unsubscribe URL's base without
// Config.UnsubscribeBase: the dev server's own route.
const DefaultUnsubscribeBase = "/unsubscribe"

// deliverability gives the runtime what the send function has in AWS: a
// suppression list (in memory) and signed one-click unsubscribe links, with
// a secret made for this process.
func (rt *Runtime) deliverability(base string) error {
	secret := make([]byte, unsubscribe.MinSecretBytes)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("campaigndev: unsubscribe secret: %w", err)
	}
	signer, err := unsubscribe.NewSigner(secret)
	if err != nil {
		return err
	}
	if base == "" {
		base = DefaultUnsubscribeBase
	}
	keys := unsubscribe.StaticKeys(signer)
	rt.Suppressions = suppress.NewMemory()
	rt.Unsubscribe = &unsubscribe.Page{Keys: keys, Store: rt.Suppressions, Clock: rt.clock, Log: rt.log}
	rt.worker.Deliverability = &send.Deliverability{Sender: DevSender, Suppressions: rt.Suppressions,
		Links: unsubscribe.Links{Base: base, Keys: keys}}
	return nil
}

// ServeUnsubscribe is the unsubscribe route (GET: the page, POST:
// unsubscribe), as the Unsubscribe function serves it in AWS.
func (rt *Runtime) ServeUnsubscribe(w http.ResponseWriter, r *http.Request) {
	res := rt.Unsubscribe.Serve(r.Context(), unsubscribe.Request{Method: r.Method, Token: r.URL.Query().Get("token"), Accept: r.Header.Get("Accept")})
	for k, v := range res.Headers {
		w.Header().Set(k, v)
	}
	w.WriteHeader(res.Status)
	_, _ = w.Write([]byte(res.Body))
}
