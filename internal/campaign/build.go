package campaign

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/campaign/plan"
)

// Request is what a user submits to create a campaign.
type Request struct {
	Subject    string
	Body       string
	Rules      plan.Rules
	Recipients []Recipient
}

// Limits of a request.
const (
	MaxSubject = 998     // an email header line
	MaxBody    = 200_000 // bytes; SES allows far more, the item does not
)

// Build validates a request, plans it (no send before now) and returns the
// Draft campaign and its Pending tasks: what the API's create stores and
// its preview shows. Every problem is reported, each saying how to fix it.
func Build(id, ownerID string, d Request, now time.Time, newToken func() string) (Campaign, []SendTask, error) {
	var errs []error
	if strings.TrimSpace(d.Subject) == "" || len(d.Subject) > MaxSubject || strings.ContainsAny(d.Subject, "\r\n") {
		errs = append(errs, fmt.Errorf("subject must be 1-%d characters on one line", MaxSubject))
	}
	if d.Body == "" || len(d.Body) > MaxBody {
		errs = append(errs, fmt.Errorf("body must be 1-%d bytes (given %d)", MaxBody, len(d.Body)))
	}
	if len(d.Recipients) == 0 || len(d.Recipients) > plan.MaxRecipients {
		errs = append(errs, fmt.Errorf("a campaign needs 1 to %d recipients (given %d)", plan.MaxRecipients, len(d.Recipients)))
	}
	seen := map[string]int{}
	for i, r := range d.Recipients {
		a, err := mail.ParseAddress(r.Email)
		switch {
		case err != nil || a.Address != r.Email:
			errs = append(errs, fmt.Errorf("recipient %d: %q is not a plain email address such as name@example.com", i, r.Email))
		case seen[strings.ToLower(r.Email)] > 0:
			errs = append(errs, fmt.Errorf("recipient %d: %s is also recipient %d: remove the duplicate", i, r.Email, seen[strings.ToLower(r.Email)]-1))
		default:
			seen[strings.ToLower(r.Email)] = i + 1
		}
		if len(r.Subject) > MaxSubject || strings.ContainsAny(r.Subject, "\r\n") {
			errs = append(errs, fmt.Errorf("recipient %d: subject must be at most %d characters on one line", i, MaxSubject))
		}
		if len(errs) > 20 {
			errs = append(errs, errors.New("more problems not listed"))
			break
		}
	}
	rules := d.Rules
	if rules.NotBefore.Before(now) {
		rules.NotBefore = now
	}
	var sends []plan.Send
	if len(d.Recipients) > 0 && len(d.Recipients) <= plan.MaxRecipients {
		var err error
		if sends, err = plan.Plan(len(d.Recipients), rules); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return Campaign{}, nil, fmt.Errorf("%w: %w", plan.ErrInvalid, errors.Join(errs...))
	}
	c := Campaign{ID: id, OwnerID: ownerID, Subject: d.Subject, Body: d.Body, Rules: rules, Status: Draft,
		Total: len(sends), CreatedAt: now, UpdatedAt: now}
	tasks, err := NewTasks(c, d.Recipients, sends, newToken, now)
	if err != nil {
		return Campaign{}, nil, err
	}
	return c, tasks, nil
}
