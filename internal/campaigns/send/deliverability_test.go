package send_test

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	"github.com/unschedule/unschedule/internal/campaigns/suppress"
	"github.com/unschedule/unschedule/internal/campaigns/unsubscribe"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

func deliverable(t *testing.T, e env) (*memory.Suppressions, *unsubscribe.Signer) {
	t.Helper()
	signer, err := unsubscribe.NewSigner(bytes.Repeat([]byte{1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	list := memory.NewSuppressions()
	e.w.Deliverability = &send.Deliverability{Sender: "news@x.io", Suppressions: list,
		Links: unsubscribe.Links{Base: "https://u.example.com/unsubscribe", Keys: unsubscribe.StaticKeys(signer)}}
	return list, signer
}

func TestSuppressedAddressEndsSuppressedAndSendsNothing(t *testing.T) {
	for _, c := range []struct {
		name   string
		sender string
		reason suppress.Reason
		want   send.Outcome
		state  campaign.State
		sent   int
	}{
		{"hard bounce", "news@x.io", suppress.Bounce, send.Suppressed, campaign.Suppressed, 0},
		{"complaint", "news@x.io", suppress.Complaint, send.Suppressed, campaign.Suppressed, 0},
		{"unsubscribe, another spelling", "NEWS@x.io", suppress.Unsubscribe, send.Suppressed, campaign.Suppressed, 0},
		// One list whatever the From address: an entry of mail sent
		// under a former From address still suppresses.
		{"suppressed under a former From address", "former@x.io", suppress.Unsubscribe, send.Suppressed, campaign.Suppressed, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := setup(t, campaign.Pending, campaign.Active, inWindow)
			list, _ := deliverable(t, e)
			if _, err := list.Add(context.Background(), suppress.Entry{Sender: c.sender, Address: "A@Example.com", Reason: c.reason}); err != nil {
				t.Fatal(err)
			}
			got, err := e.w.Handle(context.Background(), fire)
			task := e.task(t)
			if got != c.want || err != nil || task.State != c.state || len(e.sender.Outbox) != c.sent {
				t.Fatalf("Handle = %s, %v; task %s, %d sent; want %s, %s, %d", got, err, task.State, len(e.sender.Outbox), c.want, c.state, c.sent)
			}
			if task.State == campaign.Suppressed && (!task.State.Terminal() || !strings.Contains(task.Reason, string(c.reason)) || task.Attempt != 0) {
				t.Errorf("suppressed task %+v: terminal, with the reason, never claimed", task)
			}
			// A second fire (at least once) leaves it as it is.
			if got, err := e.w.Handle(context.Background(), fire); got != send.Skipped || err != nil || len(e.sender.Outbox) != c.sent {
				t.Errorf("second fire = %s, %v", got, err)
			}
		})
	}
}

func TestEveryMessageCarriesASignedUnsubscribeLink(t *testing.T) {
	e := setup(t, campaign.Pending, campaign.Active, inWindow)
	_, signer := deliverable(t, e)
	if got, err := e.w.Handle(context.Background(), fire); got != send.Sent || err != nil {
		t.Fatalf("Handle = %s, %v", got, err)
	}
	m := e.sender.Outbox[0]
	u, err := url.Parse(m.UnsubscribeURL)
	if err != nil || !strings.HasPrefix(m.UnsubscribeURL, "https://u.example.com/unsubscribe?token=") {
		t.Fatalf("UnsubscribeURL %q (%v)", m.UnsubscribeURL, err)
	}
	c, err := signer.Verify(u.Query().Get("token"))
	if err != nil || c != (unsubscribe.Claims{Sender: "news@x.io", Address: "a@example.com", Campaign: "c1"}) {
		t.Errorf("token claims %+v, %v", c, err)
	}
	if !strings.HasPrefix(m.Body, "Hello!") || !strings.Contains(m.Body, m.UnsubscribeURL) {
		t.Errorf("body %q does not link %q", m.Body, m.UnsubscribeURL)
	}
}

type brokenList struct{ *memory.Suppressions }

func (brokenList) Get(context.Context, string) (suppress.Entry, bool, error) {
	return suppress.Entry{}, false, errors.New("throttled")
}

// A suppression list that cannot be read sends nothing and is retried:
// never mail an address that may be suppressed.
func TestUnreadableSuppressionListIsRetried(t *testing.T) {
	e := setup(t, campaign.Pending, campaign.Active, inWindow)
	deliverable(t, e)
	e.w.Deliverability.Suppressions = brokenList{memory.NewSuppressions()}
	if _, err := e.w.Handle(context.Background(), fire); err == nil || len(e.sender.Outbox) != 0 || e.task(t).State != campaign.Pending {
		t.Fatalf("error %v, %d sent, task %s; want an error, nothing sent, Pending", err, len(e.sender.Outbox), e.task(t).State)
	}
}
