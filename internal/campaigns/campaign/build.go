package campaign

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/plan"
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
	// MaxSubject is the longest subject in bytes: RFC 5322 section
	// 2.1.1 limits a header line to 998 characters.
	MaxSubject = 998
	MaxBody    = 200_000 // bytes; SES allows far more, the item does not
)

// ErrInvalid is wrapped by every error of Build that a caller can fix.
var ErrInvalid = errors.New("invalid campaign")

// InvalidError lists every problem of a request, each naming its field
// (subject, body, recipients[i].email, schedule.windows, ...) and saying
// how to fix it. It wraps ErrInvalid; the schedule's problems come from
// plan without its prefix, so no message says a prefix twice.
type InvalidError struct{ Problems []string }

func (e *InvalidError) Error() string {
	return ErrInvalid.Error() + ": " + strings.Join(e.Problems, "; ")
}

func (e *InvalidError) Unwrap() error { return ErrInvalid }

// maxProblems bounds how many problems one error lists.
const maxProblems = 20

// Build validates a request, plans it (no send before now) and returns the
// Draft campaign and its Pending tasks: what the API's create stores and
// its preview shows. Every problem is reported (an *InvalidError), each
// saying how to fix it.
func Build(id, ownerID string, d Request, now time.Time, newToken func() string) (Campaign, []SendTask, error) {
	var errs []string
	if strings.TrimSpace(d.Subject) == "" || len(d.Subject) > MaxSubject || strings.ContainsAny(d.Subject, "\r\n") {
		errs = append(errs, fmt.Sprintf("subject must be 1-%d bytes on one line (given %d bytes)", MaxSubject, len(d.Subject)))
	}
	if d.Body == "" || len(d.Body) > MaxBody {
		errs = append(errs, fmt.Sprintf("body must be 1-%d bytes (given %d)", MaxBody, len(d.Body)))
	}
	if p := plan.RecipientsProblem(len(d.Recipients)); p != "" {
		errs = append(errs, p)
	}
	seen := map[string]int{}
	for i, r := range d.Recipients {
		a, err := mail.ParseAddress(r.Email)
		switch {
		case err != nil || a.Address != r.Email:
			errs = append(errs, fmt.Sprintf("recipients[%d].email %q is not a plain email address such as name@example.com", i, r.Email))
		case seen[strings.ToLower(r.Email)] > 0:
			errs = append(errs, fmt.Sprintf("recipients[%d].email %s is also recipients[%d]: remove the duplicate", i, r.Email, seen[strings.ToLower(r.Email)]-1))
		default:
			seen[strings.ToLower(r.Email)] = i + 1
		}
		if len(r.Subject) > MaxSubject || strings.ContainsAny(r.Subject, "\r\n") {
			errs = append(errs, fmt.Sprintf("recipients[%d].subject must be at most %d bytes on one line", i, MaxSubject))
		}
		if len(errs) > maxProblems {
			errs = append(errs, "more problems not listed")
			break
		}
	}
	rules := d.Rules
	if rules.NotBefore.Before(now) {
		rules.NotBefore = now
	}
	var sends []plan.Send
	if plan.RecipientsProblem(len(d.Recipients)) == "" {
		var err error
		var pe *plan.InvalidError
		switch sends, err = plan.Plan(len(d.Recipients), rules); {
		case errors.As(err, &pe):
			errs = append(errs, pe.Problems...)
		case err != nil:
			return Campaign{}, nil, err
		}
	}
	if len(errs) > 0 {
		return Campaign{}, nil, &InvalidError{Problems: errs}
	}
	c := Campaign{ID: id, OwnerID: ownerID, Subject: d.Subject, Body: d.Body, Rules: rules, Status: Draft,
		Total: len(sends), CreatedAt: now, UpdatedAt: now}
	tasks, err := NewTasks(c, d.Recipients, sends, newToken, now)
	if err != nil {
		return Campaign{}, nil, err
	}
	return c, tasks, nil
}
