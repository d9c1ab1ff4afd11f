package notify

import (
	"strings"

	"github.com/unschedule/unschedule/internal/domain/task"
)

// MaxSubjectLen is the longest subject sent: SNS takes email subjects of
// fewer than 100 characters, ASCII only, with no line breaks.
const MaxSubjectLen = 99

// Message is the text of an expiry notification.
type Message struct {
	Subject string
	Body    string
}

const subjectPrefix = "Task expired: "

// FormatMessage writes the notification of an expired task: its title, its
// deadline (RFC 3339 UTC and a human form) and, when set, the link to the
// task in the web app as its last line (<web URL>/#/tasks/<taskId>), where
// a mail client shows it as the one thing to do.
//
// The subject is made safe for SNS: non-ASCII characters and control
// characters become '?', and a long title is cut with "...". The body keeps
// the title as is.
func FormatMessage(n task.Notification) Message {
	subject := subjectPrefix + asciiLine(n.Title)
	if len(subject) > MaxSubjectLen {
		subject = strings.TrimRight(subject[:MaxSubjectLen-3], " ") + "..."
	}
	due := n.DueAt.UTC()
	var b strings.Builder
	b.WriteString("Your task \"" + n.Title + "\" reached its deadline without being completed, so it has expired.\n\n")
	b.WriteString("Due: " + due.Format("Monday, 2 January 2006 at 15:04 UTC") + " (" + task.FormatTime(due) + ")\n")
	b.WriteString("\nYou receive this because you signed up for task reminders with this address.\n")
	if n.Link != "" {
		b.WriteString("\nOpen the task: " + n.Link + "\n")
	}
	return Message{Subject: subject, Body: b.String()}
}

// asciiLine replaces every rune outside printable ASCII with '?'.
func asciiLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return '?'
		}
		return r
	}, s)
}
