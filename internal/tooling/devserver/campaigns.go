package devserver

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/core/httpapi"
)

// EmailKindCampaign marks a campaign email in the outbox.
const EmailKindCampaign = "campaign"

// identity is what a user's token says; a user of Config.CampaignSenders
// is in the sender group with a proved address (cmd/dev/README.md,
// "Campaign senders").
func (s *Server) identity(u User) Claims {
	c := Claims{Sub: u.Sub, Email: u.Email, EmailVerified: u.EmailVerified}
	if campaignSender(s.cfg.CampaignSenders, u.Email) {
		c.EmailVerified, c.EmailProof, c.Groups = true, EmailKey(u.Email), []string{campaignapi.DefaultSenderGroup}
	}
	return c
}

// campaignSender reports whether email is listed, itself or by its
// "@domain".
func campaignSender(senders []string, email string) bool {
	at := strings.LastIndexByte(email, '@')
	for _, s := range senders {
		if strings.EqualFold(s, email) || (at > 0 && strings.HasPrefix(s, "@") && strings.EqualFold(s, email[at:])) {
			return true
		}
	}
	return false
}

// devSenders is the sender check of make dev (campaign.SenderCheck): an
// owner may send while their account exists and Config.CampaignSenders
// lists them, the rule behind their tokens' group (identity).
type devSenders struct{ s *Server }

// Check implements campaign.SenderCheck.
func (d devSenders) Check(_ context.Context, owner string) (campaign.Verdict, error) {
	u, err := d.s.db.UserBySub(owner)
	switch {
	case errors.Is(err, ErrUserNotFound):
		return campaign.Refuse("the user no longer exists"), nil
	case err != nil:
		return campaign.Verdict{}, err
	case !campaignSender(d.s.cfg.CampaignSenders, u.Email):
		return campaign.Refuse("not in the sender group"), nil
	}
	return campaign.Allow(), nil
}

// campaignRoutes serves the campaign API (campaignapi.Handler, the
// handler the Api function runs) and the progress stream.
func (s *Server) campaignRoutes(mux *http.ServeMux) {
	for _, route := range []string{campaignapi.RouteCampaigns, campaignapi.RoutePreview, campaignapi.RouteCampaign,
		campaignapi.RouteProvision, campaignapi.RouteCancel} {
		mux.HandleFunc(route, s.serveHandler(route, s.campaigns.api, campaignapi.MaxBody))
	}
	mux.HandleFunc("GET /campaigns/{id}/events", s.serveCampaignEvents)
	mux.HandleFunc(RouteUnsubscribe, s.campaigns.serveUnsubscribe) // public, as in AWS
}

// serveCampaignEvents is GET /campaigns/{id}/events: the campaign's
// progress as server-sent events, for its owner only. A caller who is
// not a sender gets the API's 403, as on every other campaign route.
func (s *Server) serveCampaignEvents(w http.ResponseWriter, r *http.Request) {
	claims, err := s.verify(r)
	if err != nil {
		writeError(w, http.StatusUnauthorized, "unauthorized", errUnauthorized)
		return
	}
	// The API handlers allow the server's origins the same way.
	for k, v := range httpapi.CORS(httpapi.Response{}, s.origins(), r.Header.Get("Origin")).Headers {
		w.Header().Set(k, v)
	}
	if resp := s.campaigns.api.Authorize(r.Context(), httpapi.Request{UserID: claims.Sub, Email: claims.Email,
		EmailVerified: claims.EmailVerified, EmailProof: claims.EmailProof, Groups: claims.Groups}); resp != nil {
		write(w, *resp)
		return
	}
	ServeEvents(w, r, s.campaigns.hub, s.campaigns.store, claims.Sub, r.PathValue("id"), DefaultEventsKeepAlive)
}

// StopStreams ends the open progress streams (http.Server's
// RegisterOnShutdown: Shutdown waits for open requests).
func (s *Server) StopStreams() { s.campaigns.hub.Close() }
