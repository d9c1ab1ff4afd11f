package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/domain/notify"
)

// EnvAllowedEmailDomains names the optional allow-list setting.
const EnvAllowedEmailDomains = "ALLOWED_EMAIL_DOMAINS"

type handler struct {
	policy notify.SignUpPolicy
	log    *slog.Logger
}

// configure reads the environment once, at cold start.
func configure(getenv func(string) string, log *slog.Logger) (*handler, error) {
	domains, err := notify.ParseDomains(getenv(EnvAllowedEmailDomains))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvAllowedEmailDomains, err)
	}
	return &handler{policy: notify.NewSignUpPolicy(domains), log: log}, nil
}

// handle accepts the sign-up (auto-confirmed, email verified) or refuses
// it with an error whose message Cognito shows to the person signing up.
func (h *handler) handle(ctx context.Context, ev events.CognitoEventUserPoolsPreSignup) (events.CognitoEventUserPoolsPreSignup, error) {
	email := ev.Request.UserAttributes["email"]
	if err := h.policy.Check(email); err != nil {
		h.log.WarnContext(ctx, "sign-up refused", "triggerSource", ev.TriggerSource,
			"emailDomain", notify.EmailDomain(email), "reason", err.Error())
		return ev, err
	}
	ev.Response.AutoConfirmUser = true
	ev.Response.AutoVerifyEmail = true
	return ev, nil
}
