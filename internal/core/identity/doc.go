// Package identity holds the rules about who a user is that more than one
// adopter checks: the sign-up allow-list of email domains (SignUpPolicy)
// and the proof of an address (custom:email_proof, EmailProven), which the
// to-do app's triggers write and the campaign sender check reads.
package identity
