// Package cognitosenders is campaign.SenderCheck on a Cognito user pool:
// a campaign's owner (the pool's sub) may send while the user exists, is
// enabled, belongs to the sender group, has email_verified true, has a
// proof of their current address (the proof attribute, written only by
// the user pool's PostConfirmation trigger after a code reached that
// address: docs/decisions/sender-email-proof.md) and, with an allow-list,
// an address in an allowed domain. Each check is one AdminGetUser and
// one or more AdminListGroupsForUser pages; wrap it in
// campaign.CachedSenderCheck.
package cognitosenders

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	ciptypes "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignenv"
	"github.com/unschedule/unschedule/internal/core/identity"
	"github.com/unschedule/unschedule/internal/core/lambdaenv"
)

// ProofAttribute is the user attribute that holds the address the user
// last proved with a code (identity.EmailProofAttribute).
const ProofAttribute = identity.EmailProofAttribute

// Client is the part of the Cognito API the check calls.
type Client interface {
	AdminGetUser(ctx context.Context, in *cip.AdminGetUserInput, opts ...func(*cip.Options)) (*cip.AdminGetUserOutput, error)
	AdminListGroupsForUser(ctx context.Context, in *cip.AdminListGroupsForUserInput, opts ...func(*cip.Options)) (*cip.AdminListGroupsForUserOutput, error)
}

// Config names the pool, the group and the allowed domains.
type Config struct {
	UserPoolID string
	Group      string
	// Domains restricts senders to addresses in these domains (the
	// sign-up allow-list, checked again on the current address). Empty:
	// any domain.
	Domains []string
}

// Check is the sender check on the pool.
type Check struct {
	client  Client
	cfg     Config
	domains identity.SignUpPolicy
}

var _ campaign.SenderCheck = (*Check)(nil)

// New returns the check; the pool id and the group are required.
func New(client Client, cfg Config) (*Check, error) {
	if client == nil || cfg.UserPoolID == "" || cfg.Group == "" {
		return nil, errors.New("cognitosenders: client, user pool id and group are required")
	}
	return &Check{client: client, cfg: cfg, domains: identity.NewSignUpPolicy(cfg.Domains)}, nil
}

// Check implements campaign.SenderCheck. The owner is the user's sub,
// which AdminGetUser and AdminListGroupsForUser accept as Username in a
// pool that signs in by email alias
// (https://docs.aws.amazon.com/cognito-user-identity-pools/latest/APIReference/API_AdminGetUser.html).
func (c *Check) Check(ctx context.Context, owner string) (campaign.Verdict, error) {
	if owner == "" {
		return campaign.Refuse("the campaign has no owner"), nil
	}
	u, err := c.client.AdminGetUser(ctx, &cip.AdminGetUserInput{UserPoolId: aws.String(c.cfg.UserPoolID), Username: aws.String(owner)})
	var nf *ciptypes.UserNotFoundException
	if errors.As(err, &nf) {
		return campaign.Refuse("the user no longer exists"), nil
	}
	if err != nil {
		return campaign.Verdict{}, fmt.Errorf("get user: %w", err)
	}
	attrs := map[string]string{}
	for _, a := range u.UserAttributes {
		attrs[aws.ToString(a.Name)] = aws.ToString(a.Value)
	}
	if v := Judge(u.Enabled, attrs, c.domains); !v.Allowed {
		return v, nil
	}
	in := &cip.AdminListGroupsForUserInput{UserPoolId: aws.String(c.cfg.UserPoolID), Username: aws.String(owner), Limit: aws.Int32(60)}
	for {
		out, err := c.client.AdminListGroupsForUser(ctx, in)
		if errors.As(err, &nf) {
			return campaign.Refuse("the user no longer exists"), nil
		}
		if err != nil {
			return campaign.Verdict{}, fmt.Errorf("list groups: %w", err)
		}
		for _, g := range out.Groups {
			if aws.ToString(g.GroupName) == c.cfg.Group {
				return campaign.Allow(), nil
			}
		}
		if aws.ToString(out.NextToken) == "" {
			return campaign.Refuse(fmt.Sprintf("not in the sender group %q", c.cfg.Group)), nil
		}
		in.NextToken = out.NextToken
	}
}

// Judge is the rule on the user's record, before the group: enabled,
// email_verified true with a proof of the current address
// (identity.EmailProven), and the address's domain allowed. The proof makes
// the difference with email_verified alone, which an auto-confirming
// PreSignUp set without proof before this rule existed.
func Judge(enabled bool, attrs map[string]string, domains identity.SignUpPolicy) campaign.Verdict {
	switch {
	case !enabled:
		return campaign.Refuse("the user is disabled")
	case strings.TrimSpace(attrs["email"]) == "":
		return campaign.Refuse("the user has no email address")
	case attrs["email_verified"] != "true":
		return campaign.Refuse("the email address is not verified")
	case !identity.EmailProven(attrs):
		return campaign.Refuse("the email address was never proven with a code (confirm sign-up, or reset the password once)")
	case domains.Check(attrs["email"]) != nil:
		return campaign.Refuse("the email address is outside the allowed domains")
	}
	return campaign.Allow()
}

// Load reads the check's Config from a function's environment
// (USER_POOL_ID, SENDER_GROUP, ALLOWED_EMAIL_DOMAINS: constructs/campaigns)
// and returns the check on client, cached for campaign.SenderCacheTTL in
// the warm function. Missing variables are env's errors (env.Err).
func Load(env *lambdaenv.Env, client Client, clock campaign.Clock) (campaign.SenderCheck, error) {
	cfg := Config{UserPoolID: env.Require(campaignenv.UserPoolID), Group: env.Require(campaignenv.SenderGroup)}
	domains, err := identity.ParseDomains(env.Optional(campaignenv.AllowedEmailDomains, ""))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", campaignenv.AllowedEmailDomains, err)
	}
	cfg.Domains = domains
	if err := env.Err(); err != nil {
		return nil, err
	}
	c, err := New(client, cfg)
	if err != nil {
		return nil, err
	}
	return campaign.NewCachedSenderCheck(c, campaign.SenderCacheTTL, clock)
}
