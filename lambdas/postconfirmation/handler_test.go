package main

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"

	"github.com/unschedule/unschedule/internal/core/identity"
	"github.com/unschedule/unschedule/internal/tooling/testfixture"
)

type fakePool struct {
	calls []*cip.AdminUpdateUserAttributesInput
	err   error
}

func (f *fakePool) AdminUpdateUserAttributes(_ context.Context, in *cip.AdminUpdateUserAttributesInput, _ ...func(*cip.Options)) (*cip.AdminUpdateUserAttributesOutput, error) {
	f.calls = append(f.calls, in)
	return &cip.AdminUpdateUserAttributesOutput{}, f.err
}

// TestHandle: a code that reached the address (sign-up or password
// reset confirmed) records its proof; an administrator's confirmation of
// an unverified address records nothing; a failed write never fails the
// confirmation.
func TestHandle(t *testing.T) {
	for _, tc := range []struct {
		name, fixture string
		proof         string // already stored
		fault         error
		want          string // the proof written, "" for no call
	}{
		{"sign-up confirmed with its code", "confirm_signup.json", "", nil, "ada@example.com"},
		{"password reset confirmed with its code", "confirm_forgot_password.json", "", nil, "ada@example.com"},
		{"proof of an earlier address replaced", "confirm_forgot_password.json", "old@example.com", nil, "ada@example.com"},
		{"proof already recorded", "confirm_forgot_password.json", "ada@example.com", nil, ""},
		{"administrator confirmed an unverified address", "admin_confirm_unverified.json", "", nil, ""},
		{"write fails: logged, confirmation goes on", "confirm_signup.json", "", errors.New("TooManyRequestsException"), "ada@example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := testfixture.Load[events.CognitoEventUserPoolsPostConfirmation](t, tc.fixture)
			if tc.proof != "" {
				ev.Request.UserAttributes[identity.EmailProofAttribute] = tc.proof
			}
			pool := &fakePool{err: tc.fault}
			h := &handler{pool: pool, log: slog.New(slog.DiscardHandler)}
			if _, err := h.handle(context.Background(), ev); err != nil {
				t.Fatalf("handle: %v", err)
			}
			if tc.want == "" {
				if len(pool.calls) != 0 {
					t.Fatalf("%d writes; want none", len(pool.calls))
				}
				return
			}
			if len(pool.calls) != 1 {
				t.Fatalf("%d writes; want 1", len(pool.calls))
			}
			in := pool.calls[0]
			a := in.UserAttributes
			if aws.ToString(in.UserPoolId) != "eu-west-1_AbCdEfGhI" || aws.ToString(in.Username) != ev.UserName || len(a) != 1 ||
				aws.ToString(a[0].Name) != identity.EmailProofAttribute || aws.ToString(a[0].Value) != tc.want {
				t.Fatalf("write %+v; want %s = %s", in, identity.EmailProofAttribute, tc.want)
			}
		})
	}
}
