// Package todoenv names the to-do app's own environment variables (its
// API, notifications and sign-up trigger), beside its code; the core's
// are in internal/core/envvars. Importing it registers them there
// (envvars.Register), so the synth tests know them.
package todoenv

import "github.com/unschedule/unschedule/internal/core/envvars"

// The variables, one line each: who sets it, and what it carries.
const (
	// AllowedOrigins lists the web origins CORS allows, comma-separated (task API and campaign API).
	AllowedOrigins = "ALLOWED_ORIGINS"
	// MaxPendingTasksPerUser caps each user's Pending tasks (taskapi).
	MaxPendingTasksPerUser = "MAX_PENDING_TASKS_PER_USER"
	// WebURL is the web app's URL, linked from notification emails (expiry, reconciler).
	WebURL = "WEB_URL"
	// TopicArnPrefix is the notification topics' ARN without the shard number (notifications).
	TopicArnPrefix = "TOPIC_ARN_PREFIX"
	// TopicShards is how many notification topics there are (notifications).
	TopicShards = "TOPIC_SHARDS"
	// AllowedEmailDomains lists the email domains that may sign up, comma-separated; empty: all (userauth; also cmd/dev).
	AllowedEmailDomains = "ALLOWED_EMAIL_DOMAINS"
	// VerifyEmailByCode is true when PreSignUp must leave email verification to Cognito's code (userauth).
	VerifyEmailByCode = "VERIFY_EMAIL_BY_CODE"
)

// All lists every name above.
var All = []string{AllowedOrigins, MaxPendingTasksPerUser, WebURL, TopicArnPrefix, TopicShards, AllowedEmailDomains, VerifyEmailByCode}

func init() { envvars.Register(All...) }
