package cognitosenders_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	ciptypes "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/cognitosenders"
)

// fakePool answers as Cognito does for one user (nil: no such user),
// listing groups two to a page.
type fakePool struct {
	user   *cip.AdminGetUserOutput
	groups []string
	err    error
	calls  []string
}

func (f *fakePool) AdminGetUser(_ context.Context, in *cip.AdminGetUserInput, _ ...func(*cip.Options)) (*cip.AdminGetUserOutput, error) {
	f.calls = append(f.calls, "AdminGetUser "+aws.ToString(in.UserPoolId)+" "+aws.ToString(in.Username))
	if f.err != nil {
		return nil, f.err
	}
	if f.user == nil {
		return nil, &ciptypes.UserNotFoundException{Message: aws.String("User does not exist.")}
	}
	return f.user, nil
}

func (f *fakePool) AdminListGroupsForUser(_ context.Context, in *cip.AdminListGroupsForUserInput, _ ...func(*cip.Options)) (*cip.AdminListGroupsForUserOutput, error) {
	f.calls = append(f.calls, "AdminListGroupsForUser")
	from := 0
	if in.NextToken != nil {
		from = int(aws.ToString(in.NextToken)[0] - '0')
	}
	out := &cip.AdminListGroupsForUserOutput{}
	for i := from; i < len(f.groups) && i < from+2; i++ {
		out.Groups = append(out.Groups, ciptypes.GroupType{GroupName: aws.String(f.groups[i])})
	}
	if from+2 < len(f.groups) {
		out.NextToken = aws.String(string(rune('0' + from + 2)))
	}
	return out, nil
}

func user(enabled bool, attrs ...string) *cip.AdminGetUserOutput {
	u := &cip.AdminGetUserOutput{Enabled: enabled, Username: aws.String("sub-1")}
	for i := 0; i < len(attrs); i += 2 {
		u.UserAttributes = append(u.UserAttributes, ciptypes.AttributeType{Name: aws.String(attrs[i]), Value: aws.String(attrs[i+1])})
	}
	return u
}

// TestCheck: only an enabled member of the group whose current address is
// verified, proven by code (the proof attribute names it) and in an
// allowed domain is a sender. An auto-verified address (email_verified
// true, no proof) is refused, and so is an address changed after its
// proof, or to a domain outside the allow-list.
func TestCheck(t *testing.T) {
	const proof = cognitosenders.ProofAttribute
	ok := []string{"email", "Ann@Example.com", "email_verified", "true", proof, "ann@example.com"}
	for _, tc := range []struct {
		name    string
		user    *cip.AdminGetUserOutput
		groups  []string
		domains []string
		allowed bool
		reason  string
	}{
		{"proven member", user(true, ok...), []string{"campaign-senders"}, nil, true, ""},
		{"member on a later page", user(true, ok...), []string{"a", "b", "c", "campaign-senders"}, nil, true, ""},
		{"proven member, allowed domain", user(true, ok...), []string{"campaign-senders"}, []string{"example.com"}, true, ""},
		{"removed from the group", user(true, ok...), []string{"a", "b", "c"}, nil, false, "not in the sender group"},
		{"deleted", nil, nil, nil, false, "no longer exists"},
		{"disabled", user(false, ok...), []string{"campaign-senders"}, nil, false, "disabled"},
		{"auto-verified, never proven", user(true, "email", "ann@example.com", "email_verified", "true"), []string{"campaign-senders"}, nil, false, "never proven"},
		{"proof of an earlier address", user(true, "email", "bob@example.com", "email_verified", "true", proof, "ann@example.com"), []string{"campaign-senders"}, nil, false, "never proven"},
		{"not verified", user(true, "email", "ann@example.com", "email_verified", "false", proof, "ann@example.com"), []string{"campaign-senders"}, nil, false, "not verified"},
		{"changed to a domain outside the allow-list", user(true, "email", "ann@elsewhere.org", "email_verified", "true", proof, "ann@elsewhere.org"), []string{"campaign-senders"}, []string{"example.com"}, false, "outside the allowed domains"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := &fakePool{user: tc.user, groups: tc.groups}
			c, err := cognitosenders.New(pool, cognitosenders.Config{UserPoolID: "eu-west-1_pool", Group: "campaign-senders", Domains: tc.domains})
			if err != nil {
				t.Fatal(err)
			}
			v, err := c.Check(context.Background(), "sub-1")
			if err != nil || v.Allowed != tc.allowed || !strings.Contains(v.Reason, tc.reason) {
				t.Fatalf("Check = %+v, %v; want allowed %v, reason containing %q", v, err, tc.allowed, tc.reason)
			}
			if pool.calls[0] != "AdminGetUser eu-west-1_pool sub-1" {
				t.Fatalf("first call %q", pool.calls[0])
			}
		})
	}
}

// TestCheckErrors: a Cognito error other than a missing user is the
// check's error (it cannot tell), never a verdict.
func TestCheckErrors(t *testing.T) {
	pool := &fakePool{err: &ciptypes.TooManyRequestsException{Message: aws.String("Rate exceeded")}}
	c, _ := cognitosenders.New(pool, cognitosenders.Config{UserPoolID: "p", Group: "g"})
	var tooMany *ciptypes.TooManyRequestsException
	if _, err := c.Check(context.Background(), "sub-1"); !errors.As(err, &tooMany) {
		t.Fatalf("err = %v; want the throttle", err)
	}
	if _, err := cognitosenders.New(nil, cognitosenders.Config{}); err == nil {
		t.Fatal("New without a client: want an error")
	}
}
