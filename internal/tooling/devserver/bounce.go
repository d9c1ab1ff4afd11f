package devserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/core/httpapi"
)

// RouteOutboxFeedback is where a campaign email's owner makes it bounce
// ("bounce") or draw a complaint ("complaint").
const RouteOutboxFeedback = "POST /outbox/{seq}/{feedback}"

// sesFeedback is the SES event notification of a permanent bounce or a
// complaint, in the shape the configuration set publishes to SNS
// (https://docs.aws.amazon.com/ses/latest/dg/event-publishing-retrieving-sns-contents.html).
func sesFeedback(kind string, e Email, source string, at time.Time) ([]byte, error) {
	type recipient struct {
		EmailAddress   string `json:"emailAddress"`
		Action         string `json:"action,omitempty"`
		Status         string `json:"status,omitempty"`
		DiagnosticCode string `json:"diagnosticCode,omitempty"`
	}
	stamp := at.UTC().Format(time.RFC3339Nano)
	feedback := fmt.Sprintf("dev-%s-%d", kind, e.Seq)
	ev := map[string]any{
		"eventType": kind,
		"mail": map[string]any{"timestamp": e.At.UTC().Format(time.RFC3339Nano), "source": source,
			"messageId": "dev-" + strconv.FormatUint(e.Seq, 10), "destination": e.To},
	}
	var rs []recipient
	for _, to := range e.To {
		if kind == "Bounce" {
			rs = append(rs, recipient{EmailAddress: to, Action: "failed", Status: "5.1.1", DiagnosticCode: "smtp; 550 5.1.1 user unknown (make dev)"})
		} else {
			rs = append(rs, recipient{EmailAddress: to})
		}
	}
	if kind == "Bounce" {
		ev["bounce"] = map[string]any{"bounceType": "Permanent", "bounceSubType": "General", "bouncedRecipients": rs,
			"timestamp": stamp, "feedbackId": feedback}
	} else {
		ev["complaint"] = map[string]any{"complainedRecipients": rs, "complaintFeedbackType": "abuse",
			"timestamp": stamp, "feedbackId": feedback}
	}
	return json.Marshal(ev)
}

// serveOutboxFeedback makes one of the caller's campaign emails bounce
// for good or draw a complaint: it hands the SES event that AWS would
// publish, wrapped in its SNS notification, to the bounce function's own
// handler (campaignlambda.Bounce), which puts the recipient on the
// suppression list; the next send to them ends Suppressed.
func (s *Server) serveOutboxFeedback(r *http.Request, c Claims) httpapi.Response {
	kind := map[string]string{"bounce": "Bounce", "complaint": "Complaint"}[r.PathValue("feedback")]
	seq, err := strconv.ParseUint(r.PathValue("seq"), 10, 64)
	if kind == "" || err != nil {
		return httpapi.Error(http.StatusNotFound, "not_found", "no such route: POST /outbox/<seq>/bounce or /outbox/<seq>/complaint, seq the email's number")
	}
	all := s.db.Outbox()
	var mail *Email
	for i := range all {
		if all[i].Seq == seq && all[i].UserID == c.Sub {
			mail = &all[i]
		}
	}
	switch {
	case mail == nil:
		return httpapi.Error(http.StatusNotFound, "not_found", fmt.Sprintf("you sent no email #%d: only the campaign's owner can make its email bounce", seq))
	case mail.Kind != EmailKindCampaign || len(mail.To) == 0:
		return httpapi.Error(http.StatusBadRequest, "validation_error", fmt.Sprintf("email #%d is a %s email: only campaign emails go through SES's bounce and complaint events", seq, mail.Kind))
	}
	msg, err := sesFeedback(kind, *mail, DevSender, s.cfg.Now())
	if err != nil {
		return s.internal(r, err)
	}
	ev := events.SNSEvent{Records: []events.SNSEventRecord{{EventSource: "aws:sns", EventVersion: "1.0",
		SNS: events.SNSEntity{Type: "Notification", MessageID: fmt.Sprintf("dev-%s-%d", r.PathValue("feedback"), seq),
			Timestamp: s.cfg.Now().UTC(), Message: string(msg)}}}}
	if err := s.campaigns.bounce.Handle(r.Context(), ev); err != nil {
		return s.internal(r, err)
	}
	return httpapi.JSON(http.StatusOK, map[string]any{"seq": seq, "event": kind, "suppressed": mail.To})
}
