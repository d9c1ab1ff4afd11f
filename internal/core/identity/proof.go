package identity

import "strings"

// The proof of an email address: the user pool attribute that names the
// address its user last proved to hold by entering a code Cognito sent
// to it. Only the PostConfirmation trigger (lambdas/postconfirmation)
// writes it, with its own role; the web client may not
// (constructs/userauth). email_verified alone is not a proof: an earlier
// PreSignUp set it without one (docs/decisions/sender-email-proof.md).
const (
	// EmailProofName is the custom attribute's name in the pool schema.
	EmailProofName = "email_proof"
	// EmailProofAttribute is its name in API calls and trigger events.
	EmailProofAttribute = "custom:" + EmailProofName
)

// The PostConfirmation trigger sources that follow a code sent to the
// user's address: a sign-up confirmed with its code (or the hosted UI's
// link), and a password reset confirmed with its code (sent only to a
// verified address; the pool recovers by email only).
// https://docs.aws.amazon.com/cognito/latest/developerguide/user-pool-lambda-post-confirmation.html
const (
	SourceConfirmSignUp         = "PostConfirmation_ConfirmSignUp"
	SourceConfirmForgotPassword = "PostConfirmation_ConfirmForgotPassword"
)

// ProvenEmail is the address a PostConfirmation event proves (lower
// case), or "" when it proves none: another source, no address, or an
// address not verified (an administrator's AdminConfirmSignUp of an
// unverified user fires the same source without any code).
func ProvenEmail(triggerSource string, attrs map[string]string) string {
	if triggerSource != SourceConfirmSignUp && triggerSource != SourceConfirmForgotPassword {
		return ""
	}
	if attrs["email_verified"] != "true" {
		return ""
	}
	return normEmail(attrs["email"])
}

// EmailProven reports whether a user's attributes show their current
// address verified and proven: email_verified true and the proof naming
// that same address (a changed address needs a new proof).
func EmailProven(attrs map[string]string) bool {
	email := normEmail(attrs["email"])
	return email != "" && attrs["email_verified"] == "true" && normEmail(attrs[EmailProofAttribute]) == email
}

func normEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
