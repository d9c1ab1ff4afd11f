package cognitosenders_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	cip "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider"
	ciptypes "github.com/aws/aws-sdk-go-v2/service/cognitoidentityprovider/types"

	"github.com/unschedule/unschedule/internal/campaigns/adapters/cognitosenders"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/tooling/memory"
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

// TestUnprovenMemberSendsNothing: an account whose address an earlier
// PreSignUp marked verified without a code, then added to the sender
// group, is no sender: the send worker, asking the pool through this
// check, sends nothing and cancels the campaign (senderRemoved). Once a
// code proved the address (the proof attribute), the same send goes out.
func TestUnprovenMemberSendsNothing(t *testing.T) {
	at := time.Date(2026, 6, 1, 7, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		attrs  []string
		want   send.Outcome
		sent   int
		status campaign.Status
	}{
		{"auto-verified, never proven", []string{"email", "ann@example.com", "email_verified", "true"}, send.Cancelled, 0, campaign.CampaignCancelled},
		{"proven by a code", []string{"email", "ann@example.com", "email_verified", "true", cognitosenders.ProofAttribute, "ann@example.com"}, send.Sent, 1, campaign.Active},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := memory.NewCampaignStore()
			st.PutCampaign(campaign.Campaign{ID: "c1", OwnerID: "sub-1", Body: "Hello", Status: campaign.Active,
				Rules: plan.Rules{Windows: []plan.Window{{Start: 540, End: 1020}}, TimeZone: "Europe/Berlin", Start: plan.Date{Year: 2026, Month: 6, Day: 1}}})
			st.PutTasks(campaign.SendTask{CampaignID: "c1", ID: "c1-00000", Email: "r@example.com", Subject: "Hi", State: campaign.Pending,
				SendAt: at, SchedulerRequestToken: "tok"})
			clk := clock.NewFake(at)
			check, err := cognitosenders.New(&fakePool{user: user(true, tc.attrs...), groups: []string{"campaign-senders"}},
				cognitosenders.Config{UserPoolID: "eu-west-1_pool", Group: "campaign-senders"})
			if err != nil {
				t.Fatal(err)
			}
			outbox := memory.NewCampaignSender(clk)
			w, err := send.New(st, st, outbox, check, clk, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := w.Handle(context.Background(), campaign.FireEvent{CampaignID: "c1", TaskID: "c1-00000"})
			c, _ := st.Campaign(context.Background(), "c1")
			if err != nil || got != tc.want || len(outbox.Outbox) != tc.sent || c.Status != tc.status {
				t.Fatalf("Handle = %s, %v; %d sent, campaign %s; want %s, %d sent, %s", got, err, len(outbox.Outbox), c.Status, tc.want, tc.sent, tc.status)
			}
		})
	}
}
