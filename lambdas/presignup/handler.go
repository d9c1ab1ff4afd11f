package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/core/identity"
	"github.com/unschedule/unschedule/internal/todo/todoenv"
)

type handler struct {
	policy identity.SignUpPolicy
	// verifyByCode leaves every sign-up unconfirmed: Cognito emails a
	// code, and confirming with it verifies the address. Always true with
	// an allow-list, which is worth nothing on a domain only claimed.
	verifyByCode bool
	log          *slog.Logger
}

// configure reads the environment once, at cold start.
func configure(getenv func(string) string, log *slog.Logger) (*handler, error) {
	domains, err := identity.ParseDomains(getenv(todoenv.AllowedEmailDomains))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", todoenv.AllowedEmailDomains, err)
	}
	var byCode bool
	switch v := getenv(todoenv.VerifyEmailByCode); v {
	case "", "false":
	case "true":
		byCode = true
	default:
		return nil, fmt.Errorf("%s must be true or false (given %q)", todoenv.VerifyEmailByCode, v)
	}
	policy := identity.NewSignUpPolicy(domains)
	return &handler{policy: policy, verifyByCode: byCode || policy.Restricted(), log: log}, nil
}

// handle accepts the sign-up or refuses it with an error whose message
// Cognito shows to the person signing up. An accepted sign-up is either
// left to be confirmed by code (verifyByCode), or confirmed at once (the
// open pool's default) with its email left unverified: autoVerifyEmail is
// never set, so email_verified is true only once a code sent to the
// address came back (confirm sign-up, or the attribute verification).
// The response fields are those of
// https://docs.aws.amazon.com/cognito/latest/developerguide/user-pool-lambda-pre-sign-up.html
func (h *handler) handle(ctx context.Context, ev events.CognitoEventUserPoolsPreSignup) (events.CognitoEventUserPoolsPreSignup, error) {
	email := ev.Request.UserAttributes["email"]
	if err := h.policy.Check(email); err != nil {
		h.log.WarnContext(ctx, "sign-up refused", "triggerSource", ev.TriggerSource,
			"emailDomain", identity.EmailDomain(email), "reason", err.Error())
		return ev, err
	}
	ev.Response.AutoConfirmUser = !h.verifyByCode
	ev.Response.AutoVerifyEmail = false // never without proof: a squatted address would pass for verified
	return ev, nil
}
