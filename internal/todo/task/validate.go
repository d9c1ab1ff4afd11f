package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits on client input.
const (
	MaxTitleLen       = 200
	MaxDescriptionLen = 2000
	// MaxBodyBytes bounds a request body; larger bodies are refused before
	// they are parsed.
	MaxBodyBytes = 16 * 1024
	// MaxLeadTime is how far ahead a deadline may be set.
	MaxLeadTime = 365 * 24 * time.Hour
)

// NewTask is validated input for a create.
type NewTask struct {
	Title       string
	Description string
	DueAt       time.Time
	// Reminder: "" means DefaultReminder.
	Reminder Reminder
}

// Patch is validated input for an edit. Nil fields are left alone.
type Patch struct {
	Title       *string
	Description *string
	DueAt       *time.Time
	// Reminder changes the reminder choice.
	Reminder *Reminder
	// Complete moves the task to Done.
	Complete bool
	// Basis is set by Service.Update when DueAt or Reminder is: the
	// deadline and reminder the task had when it was read, and RemindAt
	// the reminder time that the patch makes of them. The store applies
	// the patch only while the task still has Basis (ErrConditionFailed
	// otherwise), so the stored RemindAt always matches the stored
	// deadline and reminder, even under concurrent edits.
	Basis *ReminderBasis
}

// ReminderBasis is what a patch's reminder time was computed from.
type ReminderBasis struct {
	DueAt    time.Time
	Reminder Reminder
	// RemindAt is the new reminder time (zero: none).
	RemindAt time.Time
}

// Empty reports whether the patch changes nothing.
func (p Patch) Empty() bool {
	return p.Title == nil && p.Description == nil && p.DueAt == nil && p.Reminder == nil && !p.Complete
}

type createBody struct {
	Title       *string `json:"title"`
	Description *string `json:"description"`
	DueAt       *string `json:"dueAt"`
	Reminder    *string `json:"reminder"`
}

type patchBody struct {
	Title       *string `json:"title"`
	Description *string `json:"description"`
	DueAt       *string `json:"dueAt"`
	Reminder    *string `json:"reminder"`
	Status      *string `json:"status"`
}

// ParseNewTask validates a create body against the clock reading now.
func ParseNewTask(body []byte, now time.Time) (NewTask, error) {
	var b createBody
	if err := decodeStrict(body, &b); err != nil {
		return NewTask{}, err
	}
	if b.Title == nil {
		return NewTask{}, invalid("title is required")
	}
	title, err := checkTitle(*b.Title)
	if err != nil {
		return NewTask{}, err
	}
	desc := ""
	if b.Description != nil {
		if desc, err = checkDescription(*b.Description); err != nil {
			return NewTask{}, err
		}
	}
	if b.DueAt == nil {
		return NewTask{}, invalid("dueAt is required (an RFC 3339 time such as 2030-01-02T15:04:05Z)")
	}
	due, err := checkDueAt(*b.DueAt, now)
	if err != nil {
		return NewTask{}, err
	}
	rem := DefaultReminder
	if b.Reminder != nil {
		if rem, err = ParseReminder(*b.Reminder); err != nil {
			return NewTask{}, err
		}
	}
	return NewTask{Title: title, Description: desc, DueAt: due, Reminder: rem}, nil
}

// ParsePatch validates an edit body against the clock reading now.
func ParsePatch(body []byte, now time.Time) (Patch, error) {
	var b patchBody
	if err := decodeStrict(body, &b); err != nil {
		return Patch{}, err
	}
	var p Patch
	if b.Title != nil {
		t, err := checkTitle(*b.Title)
		if err != nil {
			return Patch{}, err
		}
		p.Title = &t
	}
	if b.Description != nil {
		d, err := checkDescription(*b.Description)
		if err != nil {
			return Patch{}, err
		}
		p.Description = &d
	}
	if b.DueAt != nil {
		due, err := checkDueAt(*b.DueAt, now)
		if err != nil {
			return Patch{}, err
		}
		p.DueAt = &due
	}
	if b.Reminder != nil {
		r, err := ParseReminder(*b.Reminder)
		if err != nil {
			return Patch{}, err
		}
		p.Reminder = &r
	}
	if b.Status != nil {
		if *b.Status != "done" {
			return Patch{}, invalid("unknown status %q: the only status a client may set is \"done\"", *b.Status)
		}
		p.Complete = true
	}
	if p.Empty() {
		return Patch{}, invalid("nothing to change: send at least one of title, description, dueAt, reminder or status")
	}
	return p, nil
}

func decodeStrict(body []byte, into any) error {
	if len(body) > MaxBodyBytes {
		return &TooLargeError{Limit: MaxBodyBytes, Size: len(body)}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return invalid("request body is empty: send a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalid("request body must hold exactly one JSON object")
	}
	return exactFieldNames(body, into)
}

// exactFieldNames refuses a field whose name matches one of into's only
// when case is ignored: encoding/json matches names case-insensitively, so
// {"TITLE": ...} would set title. body is known to be one JSON object.
func exactFieldNames(body []byte, into any) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return invalid("request body must be a JSON object")
	}
	known := map[string]bool{}
	rt := reflect.TypeOf(into).Elem()
	for i := 0; i < rt.NumField(); i++ {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		known[name] = true
	}
	for name := range fields {
		if !known[name] {
			return invalid("unknown field %q: field names are case-sensitive", name)
		}
	}
	return nil
}

func jsonError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return invalid("malformed JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return invalid("request body must be a JSON object")
		}
		return invalid("field %q must be a %s", typ.Field, jsonKind(typ.Type.Kind().String()))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return invalid("unknown field %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	default:
		return invalid("malformed JSON")
	}
}

func jsonKind(goKind string) string {
	if goKind == "ptr" {
		return "string"
	}
	return goKind
}

func checkTitle(s string) (string, error) {
	s = strings.TrimSpace(s)
	if !utf8.ValidString(s) {
		return "", invalid("title must be valid UTF-8")
	}
	n := utf8.RuneCountInString(s)
	if n == 0 {
		return "", invalid("title must not be empty")
	}
	if n > MaxTitleLen {
		return "", invalid("title is too long: %d characters, at most %d", n, MaxTitleLen)
	}
	return s, nil
}

func checkDescription(s string) (string, error) {
	if !utf8.ValidString(s) {
		return "", invalid("description must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(s); n > MaxDescriptionLen {
		return "", invalid("description is too long: %d characters, at most %d", n, MaxDescriptionLen)
	}
	return s, nil
}

func checkDueAt(s string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, invalid("dueAt %q is not an RFC 3339 time (example: 2030-01-02T15:04:05Z)", s)
	}
	t = t.UTC().Truncate(time.Second)
	if !t.After(now) {
		return time.Time{}, invalid("dueAt %s is not in the future", FormatTime(t))
	}
	if t.After(now.Add(MaxLeadTime)) {
		return time.Time{}, invalid("dueAt %s is more than a year ahead", FormatTime(t))
	}
	return t, nil
}

// TooLargeError is a request body over MaxBodyBytes.
type TooLargeError struct{ Limit, Size int }

func (e *TooLargeError) Error() string {
	return sprintf("request body is %d bytes, at most %d are accepted", e.Size, e.Limit)
}
