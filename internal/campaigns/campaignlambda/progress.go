package campaignlambda

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
	"github.com/unschedule/unschedule/internal/core/logfield"
)

// TaskImage reads a send task from a stream record's new image (the
// store's own decoding: campaigntable.StreamSendTask).
type TaskImage func(img map[string]events.DynamoDBAttributeValue) (campaign.SendTask, error)

// ProgressBatch is what a stream batch changed of one campaign, and the
// sequence number of its first record there (reported when announcing it
// fails, so the stream retries from it).
type ProgressBatch struct {
	CampaignID    string
	Changes       campaignapi.Changes
	FirstSequence string
}

// DecodeProgress groups a batch of the campaign table's stream records by
// campaign, in the order first seen:
//   - a send task (sk T#…) inserted or modified: its new image, the
//     latest of the batch when one task changed twice;
//   - a campaign item (sk META) inserted or modified: its id, so that a
//     status change without a send (a cancel) is shown too;
//   - anything else (checkpoints, send records, removals) is not
//     progress and is left out.
//
// A record it cannot read is returned among the errors; the others still
// count.
func DecodeProgress(records []events.DynamoDBEventRecord, task TaskImage) ([]ProgressBatch, []error) {
	var out []ProgressBatch
	at := map[string]int{}
	var bad []error
	for _, r := range records {
		pk, sk := keyString(r.Change.Keys, tk.PartitionKey), keyString(r.Change.Keys, tk.SortKey)
		if pk == "" || sk == "" {
			bad = append(bad, fmt.Errorf("stream record %s (sequence %s) has no string %s/%s key", r.EventID, r.Change.SequenceNumber, tk.PartitionKey, tk.SortKey))
			continue
		}
		id, isCampaign := strings.CutPrefix(pk, tk.CampaignPrefix)
		isTask := strings.HasPrefix(sk, tk.TaskPrefix)
		if !isCampaign || (sk != tk.MetaSK && !isTask) || r.EventName == string(events.DynamoDBOperationTypeRemove) {
			continue
		}
		var t campaign.SendTask
		if isTask {
			var err error
			if t, err = task(r.Change.NewImage); err == nil && t.CampaignID != id {
				err = fmt.Errorf("the image's campaignId %q is not its partition's %q", t.CampaignID, id)
			}
			if err != nil {
				bad = append(bad, fmt.Errorf("stream record %s (%s %s): %w", r.EventID, pk, sk, err))
				continue
			}
		}
		i, seen := at[id]
		if !seen {
			i, at[id] = len(out), len(out)
			out = append(out, ProgressBatch{CampaignID: id, FirstSequence: r.Change.SequenceNumber})
		}
		ch := &out[i].Changes
		if !isTask {
			if len(ch.Campaigns) == 0 {
				ch.Campaigns = []string{id}
			}
			continue
		}
		replaced := false
		for j := range ch.Sends {
			if ch.Sends[j].ID == t.ID {
				ch.Sends[j], replaced = t, true
			}
		}
		if !replaced {
			ch.Sends = append(ch.Sends, t)
		}
	}
	return out, bad
}

// keyString is a string key attribute of a record ("" when absent or not
// a string).
func keyString(keys map[string]events.DynamoDBAttributeValue, name string) string {
	v, ok := keys[name]
	if !ok || v.DataType() != events.DataTypeString {
		return ""
	}
	return v.String()
}

// Progress publishes each campaign's live progress from the campaign
// table's stream (the event source mapping reports batch item failures).
type Progress struct {
	Store     campaignapi.ProgressStore
	Publisher campaignapi.ProgressPublisher
	Task      TaskImage
	Clock     campaign.Clock
	Metrics   Recorder
	Log       *slog.Logger
	// Margin is the time before the invocation's deadline at which no
	// further campaign is announced: the rest are reported as batch item
	// failures instead of the whole batch timing out.
	// Default: ProgressMargin.
	Margin time.Duration
}

// ProgressMargin leaves a publish (appsyncevents.DefaultTimeout) and a
// table read room before the deadline.
const ProgressMargin = 12 * time.Second

// Handle is the Lambda handler. Each campaign of the batch is announced
// on its own (campaignapi.Announce); one that fails (the read or the
// publish) is reported by the sequence number of its first record, so
// the stream retries from there: the campaigns after it are announced
// again, which a client applies once (Progress.AsOf). A record that does
// not decode is counted and skipped: no retry can read it. It never
// returns an error: a failure is a batch item failure.
func (p *Progress) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	defer flush(ctx, p.Metrics, p.Log)
	batches, bad := DecodeProgress(ev.Records, p.Task)
	for _, err := range bad {
		p.Metrics.Add(campaignmetrics.CampaignProgressMalformed, 1)
		p.Log.ErrorContext(ctx, "stream record does not decode; skipped", "error", err.Error())
	}
	now := p.Clock.Now()
	margin := p.Margin
	if margin == 0 {
		margin = ProgressMargin
	}
	var resp events.DynamoDBEventResponse
	for i, b := range batches {
		if d, ok := ctx.Deadline(); ok && time.Until(d) < margin {
			// The stream retries from the lowest reported record: the
			// first campaign not announced.
			p.Metrics.Add(campaignmetrics.CampaignProgressErrors, 1)
			p.Log.WarnContext(ctx, "out of time; the stream retries the rest of the batch", "campaigns", len(batches)-i,
				"sequenceNumber", b.FirstSequence)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: b.FirstSequence})
			break
		}
		err := campaignapi.Announce(ctx, p.Store, p.Publisher, b.Changes, now)
		if err == nil {
			p.Metrics.Add(campaignmetrics.CampaignProgressAnnounced, 1)
			continue
		}
		p.Metrics.Add(campaignmetrics.CampaignProgressErrors, 1)
		p.Log.ErrorContext(ctx, "announce failed; the stream retries from its first record",
			logfield.Key, campaign.CampaignItemKey(b.CampaignID).String(), "campaignId", b.CampaignID,
			"sequenceNumber", b.FirstSequence, "canceled", errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded),
			"error", err.Error())
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: b.FirstSequence})
	}
	return resp, nil
}
