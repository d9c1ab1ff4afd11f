// Package suppress is the suppression list of campaign email: the
// addresses a sender must not mail again, because mail to them bounced
// for good, their owner marked it as spam, or they unsubscribed. It is
// plain Go: the rule (which SES events suppress) and the Store port;
// internal/campaigns/adapters/ses keeps the list in the campaign table
// (internal/tooling/memory keeps one in memory for tests and make dev).
//
// A Store is one list: the construct's (CampaignsProps.SuppressionListId),
// shared by every user who sends campaigns through it and kept whatever
// From address the mail went out under, so changing the From address
// forgets nobody. It is keyed by the address in lower case (Normalize).
// Adding is idempotent: SES publishes each event at least once, and a
// duplicate keeps the first entry.
package suppress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
)

// Reason is why an address is suppressed.
type Reason string

// Reasons.
const (
	// Bounce: a hard bounce (bounceType Permanent): the address does not
	// exist or never accepts mail.
	Bounce Reason = "Bounce"
	// Complaint: the recipient marked a message as spam.
	Complaint Reason = "Complaint"
	// Unsubscribe: the recipient unsubscribed (one-click or the page).
	Unsubscribe Reason = "Unsubscribe"
)

// Entry is one suppressed address of the list. Sender is the From
// address of the mail that suppressed it (the record of what happened;
// not part of the key).
type Entry struct {
	Sender, Address string
	Reason          Reason
	At              time.Time
	// Source names what suppressed it: the SES message id and feedback
	// id of a bounce or complaint, or the campaign of an unsubscribe.
	Source string
}

// Store keeps one list.
type Store interface {
	// Add suppresses e.Address (e.Sender and e.Address are normalized by
	// the store). An address already on the list keeps its first entry,
	// whichever sender added it, and Add returns false; true when this
	// call added it.
	Add(ctx context.Context, e Entry) (bool, error)
	// Get reads the entry of address; found false if none.
	Get(ctx context.Context, address string) (e Entry, found bool, err error)
}

// Normalize is the key form of an address: the address of a
// "Name <addr>" form, trimmed, in lower case. Mailbox local parts are
// case-sensitive in theory (RFC 5321) and never in practice; one list
// entry per spelling would let "Bob@" through after "bob@" bounced.
func Normalize(address string) string {
	a := strings.TrimSpace(address)
	if p, err := mail.ParseAddress(a); err == nil {
		a = p.Address
	}
	return strings.ToLower(a)
}

// ErrMalformed: an SES event this package cannot read.
var ErrMalformed = errors.New("malformed SES event")

// sesEvent is the part of an SES event notification read here. Event
// publishing names the type eventType; an identity's feedback
// notifications name it notificationType.
// https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-sns-contents.html
type sesEvent struct {
	EventType        string `json:"eventType"`
	NotificationType string `json:"notificationType"`
	Mail             struct {
		Source    string `json:"source"`
		MessageID string `json:"messageId"`
		Timestamp string `json:"timestamp"`
	} `json:"mail"`
	Bounce *struct {
		BounceType        string      `json:"bounceType"`
		BouncedRecipients []recipient `json:"bouncedRecipients"`
		Timestamp         string      `json:"timestamp"`
		FeedbackID        string      `json:"feedbackId"`
	} `json:"bounce"`
	Complaint *struct {
		ComplainedRecipients []recipient `json:"complainedRecipients"`
		Timestamp            string      `json:"timestamp"`
		FeedbackID           string      `json:"feedbackId"`
	} `json:"complaint"`
}

type recipient struct {
	EmailAddress string `json:"emailAddress"`
}

// FromSESEvent is the rule: the entries one SES event notification adds.
// A Bounce whose bounceType is Permanent suppresses each bounced
// recipient; a Complaint each complained recipient. Every other event
// (a Transient or Undetermined bounce, Delivery, Send, ...) adds
// nothing. ErrMalformed for JSON that is not an SES event, or a
// suppressing event without a sender or recipients.
func FromSESEvent(raw []byte) ([]Entry, error) {
	var e sesEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	kind := e.EventType
	if kind == "" {
		kind = e.NotificationType
	}
	if kind == "" {
		return nil, fmt.Errorf("%w: no eventType or notificationType", ErrMalformed)
	}
	var (
		reason          Reason
		to              []recipient
		stamp, feedback string
	)
	switch {
	case kind == "Bounce" && e.Bounce != nil && e.Bounce.BounceType == "Permanent":
		reason, to, stamp, feedback = Bounce, e.Bounce.BouncedRecipients, e.Bounce.Timestamp, e.Bounce.FeedbackID
	case kind == "Complaint" && e.Complaint != nil:
		reason, to, stamp, feedback = Complaint, e.Complaint.ComplainedRecipients, e.Complaint.Timestamp, e.Complaint.FeedbackID
	case kind == "Bounce" || kind == "Complaint":
		if e.Bounce == nil && e.Complaint == nil {
			return nil, fmt.Errorf("%w: a %s event without its %s object", ErrMalformed, kind, strings.ToLower(kind))
		}
		return nil, nil // a soft bounce: the address may work later
	default:
		return nil, nil
	}
	sender := Normalize(e.Mail.Source)
	if sender == "" || len(to) == 0 {
		return nil, fmt.Errorf("%w: a %s event needs mail.source and recipients", ErrMalformed, kind)
	}
	at, err := time.Parse(time.RFC3339Nano, stamp)
	if err != nil {
		at, _ = time.Parse(time.RFC3339Nano, e.Mail.Timestamp) // zero if neither parses
	}
	out := make([]Entry, 0, len(to))
	for _, r := range to {
		a := Normalize(r.EmailAddress)
		if a == "" {
			return nil, fmt.Errorf("%w: a %s recipient without emailAddress", ErrMalformed, kind)
		}
		out = append(out, Entry{Sender: sender, Address: a, Reason: reason, At: at.UTC(), Source: e.Mail.MessageID + "/" + feedback})
	}
	return out, nil
}
