package todoapp

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"

	"github.com/unschedule/unschedule/constructs/gofn"
)

// Config is one environment's settings, read from cdk.json's context
// ("environments": {"dev": {...}, "prod": {...}}).
type Config struct {
	// Name is the environment's name ("dev", "prod", ...).
	Name string `json:"-"`
	// RemovalPolicy of stateful resources: "destroy" or "retain".
	RemovalPolicy string `json:"removalPolicy"`
	// LogRetentionDays of every log group (a CloudWatch Logs value: 1, 3,
	// 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1827, 3653).
	LogRetentionDays int `json:"logRetentionDays"`
	// AlarmEmail, when set, is subscribed to the alarm topic.
	AlarmEmail string `json:"alarmEmail"`
	// WebOrigins may call the API from a browser, in addition to the
	// hosted web app's own URL.
	WebOrigins []string `json:"webOrigins"`
	// AllowedEmailDomains restricts sign-up; empty allows everyone.
	AllowedEmailDomains []string `json:"allowedEmailDomains"`
	// NotificationShards is the number of notification topics.
	NotificationShards int `json:"notificationShards"`
	// ReconcileEveryMinutes is how often the reconciler runs.
	ReconcileEveryMinutes int `json:"reconcileEveryMinutes"`
	// WebRepository, when set, makes Amplify build web/ from this Git
	// repository instead of publishing the local build.
	WebRepository string `json:"webRepository"`
	// WebBranch is the repository branch Amplify builds (default "main").
	WebBranch string `json:"webBranch"`
	// WebAccessTokenSecretName names the Secrets Manager secret holding
	// the repository access token (required with WebRepository).
	WebAccessTokenSecretName string `json:"webAccessTokenSecretName"`
	// Waf puts AWS WAF web ACLs on the API stage and the user pool.
	Waf bool `json:"waf"`
	// MaxPendingTasksPerUser caps each user's Pending tasks (default 1000).
	MaxPendingTasksPerUser int `json:"maxPendingTasksPerUser"`
	// Campaigns adds the scheduled email campaigns (constructs/campaigns,
	// docs/campaigns.md) to the stack.
	Campaigns bool `json:"campaigns"`
	// CampaignSender is the From address of campaign emails, an SES
	// verified identity (required with Campaigns).
	CampaignSender string `json:"campaignSender"`
}

var retention = map[int]awslogs.RetentionDays{
	1: awslogs.RetentionDays_ONE_DAY, 3: awslogs.RetentionDays_THREE_DAYS, 5: awslogs.RetentionDays_FIVE_DAYS,
	7: awslogs.RetentionDays_ONE_WEEK, 14: awslogs.RetentionDays_TWO_WEEKS, 30: awslogs.RetentionDays_ONE_MONTH,
	60: awslogs.RetentionDays_TWO_MONTHS, 90: awslogs.RetentionDays_THREE_MONTHS, 120: awslogs.RetentionDays_FOUR_MONTHS,
	150: awslogs.RetentionDays_FIVE_MONTHS, 180: awslogs.RetentionDays_SIX_MONTHS, 365: awslogs.RetentionDays_ONE_YEAR,
	400: awslogs.RetentionDays_THIRTEEN_MONTHS, 545: awslogs.RetentionDays_EIGHTEEN_MONTHS,
	731: awslogs.RetentionDays_TWO_YEARS, 1827: awslogs.RetentionDays_FIVE_YEARS, 3653: awslogs.RetentionDays_TEN_YEARS,
}

// ConfigFromContext reads environment name from the "environments"
// context value (cdk.json) and checks it.
func ConfigFromContext(environments any, name string) (Config, error) {
	envs, ok := environments.(map[string]any)
	if !ok {
		return Config{}, fmt.Errorf("cdk.json context has no \"environments\" object: add one with an entry per environment (see README)")
	}
	raw, ok := envs[name]
	if !ok {
		names := make([]string, 0, len(envs))
		for k := range envs {
			names = append(names, k)
		}
		sort.Strings(names)
		return Config{}, fmt.Errorf("unknown environment %q: pass -c env=<name> with one of %s, or add it to cdk.json", name, strings.Join(names, ", "))
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return Config{}, fmt.Errorf("environment %q: %w", name, err)
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return Config{}, fmt.Errorf("environment %q in cdk.json: %w", name, err)
	}
	c.Name = name
	return c, c.Validate()
}

// Validate checks the settings and fills defaults.
func (c *Config) Validate() error {
	if c.RemovalPolicy == "" {
		c.RemovalPolicy = "retain"
	}
	if c.RemovalPolicy != "retain" && c.RemovalPolicy != "destroy" {
		return fmt.Errorf("environment %q: removalPolicy must be \"retain\" or \"destroy\" (given %q)", c.Name, c.RemovalPolicy)
	}
	if c.LogRetentionDays == 0 {
		c.LogRetentionDays = 30
	}
	if _, ok := retention[c.LogRetentionDays]; !ok {
		keys := make([]int, 0, len(retention))
		for k := range retention {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		s := make([]string, len(keys))
		for i, k := range keys {
			s[i] = strconv.Itoa(k)
		}
		return fmt.Errorf("environment %q: logRetentionDays must be one of %s (given %d)", c.Name, strings.Join(s, ", "), c.LogRetentionDays)
	}
	if c.NotificationShards == 0 {
		c.NotificationShards = 1
	}
	if c.ReconcileEveryMinutes == 0 {
		c.ReconcileEveryMinutes = 30
	}
	if c.ReconcileEveryMinutes < 1 || c.ReconcileEveryMinutes > 1440 {
		return fmt.Errorf("environment %q: reconcileEveryMinutes must be between 1 and 1440 (given %d)", c.Name, c.ReconcileEveryMinutes)
	}
	if c.WebRepository != "" && c.WebAccessTokenSecretName == "" {
		return fmt.Errorf("environment %q: webRepository is set, so webAccessTokenSecretName must name the Secrets Manager secret holding its access token", c.Name)
	}
	if c.MaxPendingTasksPerUser == 0 {
		c.MaxPendingTasksPerUser = 1000
	}
	if c.MaxPendingTasksPerUser < 1 {
		return fmt.Errorf("environment %q: maxPendingTasksPerUser must be at least 1 (given %d)", c.Name, c.MaxPendingTasksPerUser)
	}
	if c.Campaigns && !strings.Contains(c.CampaignSender, "@") {
		return fmt.Errorf("environment %q: campaigns is on, so campaignSender must be the From address of campaign emails, an SES verified identity (given %q)", c.Name, c.CampaignSender)
	}
	if c.AlarmEmail != "" && !strings.Contains(c.AlarmEmail, "@") {
		return fmt.Errorf("environment %q: alarmEmail %q is not an email address", c.Name, c.AlarmEmail)
	}
	return nil
}

// Removal is the CDK removal policy of stateful resources.
func (c Config) Removal() awscdk.RemovalPolicy {
	if c.RemovalPolicy == "destroy" {
		return awscdk.RemovalPolicy_DESTROY
	}
	return awscdk.RemovalPolicy_RETAIN
}

// LogRetention is the CDK retention value.
func (c Config) LogRetention() awslogs.RetentionDays { return retention[c.LogRetentionDays] }

// Logs are the log options of every log group of the stack: the
// environment's retention, and its removal policy (a dev stack's logs go
// with it, prod keeps them).
func (c Config) Logs() gofn.LogOptions {
	return gofn.LogOptions{Retention: c.LogRetention(), RemovalPolicy: c.Removal()}
}

// Protected reports whether stateful resources are protected from
// deletion (DeletionProtection on the table and the user pool): whenever
// they are retained.
func (c Config) Protected() bool { return c.Removal() == awscdk.RemovalPolicy_RETAIN }
