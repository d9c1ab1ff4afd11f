package main

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	ciptypes "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"
	"github.com/unschedule/unschedule/internal/core/identity"
)

// attributeWriter is the one Cognito call of the trigger.
type attributeWriter interface {
	AdminUpdateUserAttributes(ctx context.Context, in *cip.AdminUpdateUserAttributesInput, opts ...func(*cip.Options)) (*cip.AdminUpdateUserAttributesOutput, error)
}

type handler struct {
	pool attributeWriter
	log  *slog.Logger
}

// handle records the proof of the address a confirmation proved
// (identity.ProvenEmail) in identity.EmailProofAttribute, unless it holds
// that address already. It never fails the confirmation: a failed write
// is logged, and the user proves the address again by resetting their
// password.
func (h *handler) handle(ctx context.Context, ev events.CognitoEventUserPoolsPostConfirmation) (events.CognitoEventUserPoolsPostConfirmation, error) {
	attrs := ev.Request.UserAttributes
	email := identity.ProvenEmail(ev.TriggerSource, attrs)
	if email == "" {
		h.log.InfoContext(ctx, "confirmation proves no address", "triggerSource", ev.TriggerSource, "emailVerified", attrs["email_verified"])
		return ev, nil
	}
	if attrs[identity.EmailProofAttribute] == email {
		return ev, nil
	}
	_, err := h.pool.AdminUpdateUserAttributes(ctx, &cip.AdminUpdateUserAttributesInput{
		UserPoolId: aws.String(ev.UserPoolID), Username: aws.String(ev.UserName),
		UserAttributes: []ciptypes.AttributeType{{Name: aws.String(identity.EmailProofAttribute), Value: aws.String(email)}},
	})
	if err != nil {
		h.log.ErrorContext(ctx, "email proof not recorded", "triggerSource", ev.TriggerSource, "emailDomain", identity.EmailDomain(email), "error", err.Error())
		return ev, nil
	}
	h.log.InfoContext(ctx, "email proof recorded", "triggerSource", ev.TriggerSource, "emailDomain", identity.EmailDomain(email))
	return ev, nil
}
