package campaignlambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/campaigns/suppress"
)

// Bounce is the bounce function's handler (lambdas/campaignbounce): it
// adds the recipients of each record's SES event (bounces and complaints
// the configuration set publishes to SNS) to the suppression list. Any
// failure is returned: Lambda retries the asynchronous invocation (Add
// is idempotent, so a record added before the failure is added again
// harmlessly), then sends the event to the failure queue, which is
// alarmed; an unreadable event lands there too, to be inspected. make
// dev hands it the events of its outbox's bounce and complaint buttons.
type Bounce struct {
	List suppress.Store
	Log  *slog.Logger
}

// Handle is the Lambda handler: an SNS event in.
func (h *Bounce) Handle(ctx context.Context, e events.SNSEvent) error {
	var errs []error
	for _, r := range e.Records {
		entries, err := suppress.FromSESEvent([]byte(r.SNS.Message))
		if err != nil {
			h.Log.ErrorContext(ctx, "unreadable SES event", "snsMessageId", r.SNS.MessageID, "error", err.Error())
			errs = append(errs, fmt.Errorf("sns message %s: %w", r.SNS.MessageID, err))
			continue
		}
		for _, en := range entries {
			added, err := h.List.Add(ctx, en)
			if err != nil {
				errs = append(errs, fmt.Errorf("sns message %s: %w", r.SNS.MessageID, err))
				continue
			}
			// The address is personal data: the log names the event only.
			h.Log.InfoContext(ctx, "suppressed", "reason", string(en.Reason), "source", en.Source, "new", added)
		}
	}
	return errors.Join(errs...)
}
