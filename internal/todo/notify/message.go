package notify

import (
	"strings"
	"time"

	"github.com/unschedule/unschedule/internal/todo/task"
)

// MaxSubjectLen is the longest subject sent. SNS takes email subjects of
// fewer than 100 characters with no line breaks or control characters:
// "ASCII text that begins with a letter, number, or punctuation mark" in
// the Publish reference of most SDKs, "UTF-8 text" in the newest
// (aws-sdk-go-v2/service/sns PublishInput.Subject). For a subject with
// "control characters or non-ASCII characters, SNS replaces the subject
// with Error - contains control- or non-ASCII characters"
// (https://docs.aws.amazon.com/prometheus/latest/userguide/AMP-alertmanager-receiver-validation-truncation.html).
// So subjects here are printable ASCII (Subject, ASCII).
const MaxSubjectLen = 99

// Message is the text of an expiry notification.
type Message struct {
	Subject string
	Body    string
}

const subjectPrefix = "Task expired: "

// FormatMessage writes the notification of an expired task: its title,
// its description (when set), its deadline in the owner's time zone and
// in UTC ("Monday, 4 March 2030 at 18:05 CET (17:05 UTC)"; UTC alone when
// n names no zone), and, when set, the link to the task in the web app as
// its last line (<web URL>/#/tasks/<taskId>), where a mail client shows it
// as the one thing to do.
//
// The subject is the title in ASCII (see Subject); the body keeps the
// title and the description as they are, line breaks included.
//
// A reminder (n.Reminder set) says the task is due soon instead: subject
// "Due in 1 hour: <title>" ("15 minutes", "1 day"), with the same
// description, deadline line and link.
func FormatMessage(n task.Notification) Message {
	if n.Reminder.Offset() > 0 {
		return formatReminder(n)
	}
	loc := Location(n.TimeZone)
	return Message{
		Subject: Subject(subjectPrefix, n.Title, "Task expired: due at "+Clock(n.DueAt, loc)),
		Body:    body(n, loc, "Your task \""+n.Title+"\" reached its deadline without being completed, so it has expired."),
	}
}

// formatReminder writes the reminder of a task due soon.
func formatReminder(n task.Notification) Message {
	loc := Location(n.TimeZone)
	in := n.Reminder.Words()
	return Message{
		Subject: Subject("Due in "+in+": ", n.Title, "Due in "+in+": a task due at "+Clock(n.DueAt, loc)),
		Body:    body(n, loc, "Your task \""+n.Title+"\" is due in "+in+". Complete it before then, or it expires."),
	}
}

// body is the text of both messages: the opening line, the description,
// the deadline in the owner's zone and in UTC, why this address gets it,
// and the link.
func body(n task.Notification, loc *time.Location, opening string) string {
	var b strings.Builder
	b.WriteString(opening + "\n\n")
	if d := plainText(n.Description); d != "" {
		b.WriteString(d + "\n\n")
	}
	b.WriteString("Due: " + dueLine(n.DueAt, loc) + "\n")
	b.WriteString("\nYou receive this because you signed up for task reminders with this address.\n")
	if n.Link != "" {
		b.WriteString("\nOpen the task: " + n.Link + "\n")
	}
	return b.String()
}

// Subject is prefix followed by title in ASCII (see ASCII), cut with
// "..." to fit MaxSubjectLen. A title with no letter or digit left in
// ASCII (all CJK, say) gives fallback instead. prefix and fallback must
// be ASCII and begin with a letter.
func Subject(prefix, title, fallback string) string {
	t := ASCII(title)
	if !strings.ContainsFunc(t, func(r rune) bool { return r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) {
		return cut(fallback)
	}
	return cut(prefix + t)
}

// cut shortens an ASCII subject to MaxSubjectLen, ending with "...".
func cut(s string) string {
	if len(s) <= MaxSubjectLen {
		return s
	}
	return strings.TrimRight(s[:MaxSubjectLen-3], " ") + "..."
}

// plainText is a description as the body shows it: Windows and old Mac
// line ends become "\n", control characters other than line breaks and
// tabs are dropped, and blank lines around it are trimmed.
func plainText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, s)
	return strings.Trim(s, "\n \t")
}
