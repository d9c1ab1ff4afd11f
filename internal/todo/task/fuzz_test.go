package task_test

import (
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/todo/task"
)

var fuzzNow = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// checkParsed: a parse either gives valid input or a client error, never
// anything else.
func checkParseErr(t *testing.T, err error) {
	t.Helper()
	var ve *task.ValidationError
	var tl *task.TooLargeError
	if err != nil && !errors.As(err, &ve) && !errors.As(err, &tl) {
		t.Fatalf("error is neither a ValidationError nor a TooLargeError: %T %v", err, err)
	}
}

func checkDue(t *testing.T, due time.Time) {
	t.Helper()
	if !due.After(fuzzNow) || due.After(fuzzNow.Add(task.MaxLeadTime)) || due.Location() != time.UTC || due.Nanosecond() != 0 {
		t.Fatalf("accepted dueAt %v outside (now, now+MaxLeadTime] or not whole UTC seconds", due)
	}
}

func checkTitle(t *testing.T, title string) {
	t.Helper()
	if title == "" || len([]rune(title)) > task.MaxTitleLen {
		t.Fatalf("accepted title %q", title)
	}
}

// FuzzParseNewTask: never a panic; accepted input is within the limits;
// refused input is a client error.
func FuzzParseNewTask(f *testing.F) {
	for _, s := range []string{
		`{"title":"Pay rent","dueAt":"2030-01-02T00:00:00Z"}`,
		`{"title":"  x  ","description":"d","dueAt":"2030-01-01T12:00:01+01:00"}`,
		`{"title":"","dueAt":"2030-01-02T00:00:00Z"}`,
		`{"title":"a","dueAt":"2031-01-02T00:00:00Z"}`,
		`{"title":1}`, `[]`, `null`, `{"title":"a","dueAt":"2030-01-02T00:00:00Z"} {}`, `{"x":1}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		in, err := task.ParseNewTask(body, fuzzNow)
		checkParseErr(t, err)
		if err != nil {
			return
		}
		checkTitle(t, in.Title)
		checkDue(t, in.DueAt)
		if len([]rune(in.Description)) > task.MaxDescriptionLen {
			t.Fatalf("accepted a description of %d runes", len([]rune(in.Description)))
		}
	})
}

// FuzzParsePatch: never a panic; an accepted patch changes something and
// is within the limits.
func FuzzParsePatch(f *testing.F) {
	for _, s := range []string{
		`{"status":"done"}`, `{"status":"Done"}`, `{"dueAt":"2030-01-01T13:00:00Z"}`, `{"title":"t","description":""}`,
		`{}`, `{"status":null}`, `{"dueAt":"yesterday"}`, `{"title":"` + string(make([]byte, 300)) + `"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := task.ParsePatch(body, fuzzNow)
		checkParseErr(t, err)
		if err != nil {
			return
		}
		if p.Empty() {
			t.Fatal("accepted an empty patch")
		}
		if p.Title != nil {
			checkTitle(t, *p.Title)
		}
		if p.DueAt != nil {
			checkDue(t, *p.DueAt)
		}
	})
}
