// Package reminder is the renewal-reminder example's rule: when a customer
// subscribes (or renews), remind them one week before the next charge,
// once per customer and year.
package reminder

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/unschedule/unschedule/futureevents/futureevent"
)

// Lead is how long before the charge the reminder goes out.
const Lead = 7 * 24 * time.Hour

// EnvRemindFunction carries the reminder function's ARN to the subscribe
// function (the target of every event).
const EnvRemindFunction = "REMIND_FUNCTION_ARN"

// Subscription is the event: a customer whose subscription renews (is
// charged) at ChargeAt.
type Subscription struct {
	Email     string    `json:"email"`
	FirstName string    `json:"firstName"`
	ChargeAt  time.Time `json:"chargeAt"`
}

// Payload is what the reminder function receives.
type Payload struct {
	Email     string    `json:"email"`
	FirstName string    `json:"firstName"`
	ChargeAt  time.Time `json:"chargeAt"`
}

// Reminder is one future event to schedule.
type Reminder struct {
	Name    string
	At      time.Time
	Payload []byte
}

// ErrInvalid is a subscription that cannot be reminded.
var ErrInvalid = errors.New("invalid subscription")

// For is the reminder of s: at ChargeAt minus Lead, named by the email
// (lower-cased) and the charge's year, as the seed does, so a customer is
// never reminded twice for one year's charge: scheduling it again is no
// duplicate (futureevents/client: Client.Schedule).
func For(s Subscription) (Reminder, error) {
	email := strings.ToLower(strings.TrimSpace(s.Email))
	if !strings.Contains(email, "@") {
		return Reminder{}, fmt.Errorf("%w: email %q", ErrInvalid, s.Email)
	}
	if s.ChargeAt.IsZero() {
		return Reminder{}, fmt.Errorf("%w: no chargeAt", ErrInvalid)
	}
	charge := s.ChargeAt.UTC()
	p, err := json.Marshal(Payload{Email: email, FirstName: s.FirstName, ChargeAt: charge})
	if err != nil {
		return Reminder{}, err
	}
	return Reminder{
		Name:    futureevent.Name("renewal", email, strconv.Itoa(charge.Year())),
		At:      charge.Add(-Lead),
		Payload: p,
	}, nil
}

// LogFields are what the reminder function may log of p: the charge's
// day, never the recipient's address or name. Those are personal data,
// which logs keep for their retention and show to whoever reads them;
// send the Message to p.Email, and log that it was sent.
func LogFields(p Payload) []any {
	return []any{"chargeOn", p.ChargeAt.UTC().Format(time.DateOnly)}
}

// Message is the reminder's text.
func Message(p Payload) string {
	name := p.FirstName
	if name == "" {
		name = "there"
	}
	return fmt.Sprintf("Hi %s, your subscription renews on %s; we will charge you then.", name, p.ChargeAt.Format("Monday 2 January 2006"))
}
