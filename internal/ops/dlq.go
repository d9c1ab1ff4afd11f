package ops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
)

// Letter is one message of a failure queue, decoded.
type Letter struct {
	Queue string    `json:"queue"`
	Kind  QueueKind `json:"kind"`
	ID    string    `json:"id"`
	// Key is the item the message is about ("" when the message does not
	// name one: a stream failure names shard and sequence numbers).
	Key    string `json:"key,omitempty"`
	Reason string `json:"reason"`
	// Receives is how often the message was received (SQS's count).
	Receives string `json:"receives,omitempty"`
	body     string
	group    string
	dedup    string
	receipt  string
	queue    Queue
	key      contract.Key
}

// DefaultVisibility is how long a peek or a redrive holds the messages
// it read, in seconds: long enough to page through a queue; a peek resets
// each to 0 at once after, so the consumers see them again, and a
// redrive stopped part-way leaves its messages to reappear after it.
const DefaultVisibility = 30

// DefaultPollWait is each receive's long-poll wait, in seconds. A short
// poll (wait 0) asks only a subset of SQS's servers and may answer empty
// while messages wait, so a peek that stops at its first empty answer
// could report a queue empty that is not; a long poll asks them all
// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-short-and-long-polling.html).
// It costs one wait of this length at the end of each queue read.
const DefaultPollWait = 1

func (w *World) pollWait() int32 {
	if w.PollWait > 0 {
		return min(w.PollWait, 20)
	}
	return DefaultPollWait
}

func (w *World) visibility() int32 {
	if w.Visibility > 0 {
		return w.Visibility
	}
	return DefaultVisibility
}

// peek reads up to max messages of q without consuming them: received
// with a short visibility timeout, and made visible again (0) before it
// returns. On a FIFO queue it sees the first message of each message
// group (each item) only: SQS returns no more of a group while one is in
// flight, and a peek deletes nothing
// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/FIFO-queues-understanding-logic.html).
func (w *World) peek(ctx context.Context, q Queue, max int) ([]Letter, error) {
	var out []Letter
	seen := map[string]bool{}
	defer func() {
		for _, l := range out {
			_, _ = w.SQS.ChangeMessageVisibility(context.WithoutCancel(ctx), &sqs.ChangeMessageVisibilityInput{
				QueueUrl: aws.String(q.URL), ReceiptHandle: aws.String(l.receipt), VisibilityTimeout: 0})
		}
	}()
	for len(out) < max {
		r, err := w.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL),
			MaxNumberOfMessages: int32(min(10, max-len(out))), VisibilityTimeout: w.visibility(), WaitTimeSeconds: w.pollWait(),
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"}})
		if err != nil {
			return out, fmt.Errorf("receive from %s: %w", q.Name, err)
		}
		fresh := 0
		for _, m := range r.Messages {
			id := aws.ToString(m.MessageId)
			if seen[id] {
				continue
			}
			seen[id] = true
			fresh++
			out = append(out, decode(q, m))
			w.progress(len(out), 0, fmt.Sprintf("%s: %d message(s) read", q.Name, len(out)))
		}
		if fresh == 0 {
			return out, nil
		}
	}
	return out, nil
}

// decode reads a message's item key and reason, by its queue's kind:
// a cancellation message (cancel.Message); a scheduler dead letter, whose
// body is the target's input and whose ERROR_CODE and ERROR_MESSAGE
// attributes say why
// (https://docs.aws.amazon.com/scheduler/latest/UserGuide/configuring-schedule-dlq.html);
// an asynchronous invocation record, with its requestPayload
// (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html);
// a stream mapping's failure record, which names the shard and the
// sequence numbers, not the items
// (https://docs.aws.amazon.com/lambda/latest/dg/services-dynamodb-errors.html).
func decode(q Queue, m sqstypes.Message) Letter {
	l := Letter{Queue: q.Name, Kind: q.Kind, ID: aws.ToString(m.MessageId), body: aws.ToString(m.Body),
		receipt: aws.ToString(m.ReceiptHandle), queue: q,
		Receives: m.Attributes[string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount)],
		group:    m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)],
		dedup:    m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageDeduplicationId)]}
	attr := func(name string) string {
		if v, ok := m.MessageAttributes[name]; ok {
			return aws.ToString(v.StringValue)
		}
		return ""
	}
	switch q.Kind {
	case QueueDeadLetters, QueueWork:
		var msg cancel.Message
		if err := json.Unmarshal([]byte(l.body), &msg); err != nil || msg.Partition == "" {
			l.Reason = "not a cancellation message: the worker cannot read it (poisoned); delete it by hand"
			return l
		}
		l.key = msg.Key()
		l.Reason = fmt.Sprintf("%s (event %s): the worker gave up on it", msg.Action, msg.EventID)
	case QueueSchedulerDeadLetters:
		l.Reason = strings.TrimSpace(attr("ERROR_CODE") + ": " + attr("ERROR_MESSAGE"))
		if l.Reason == ":" {
			l.Reason = "the scheduler could not invoke the target"
		}
		if q.Schema != nil {
			if p, err := q.Schema.DecodePayload([]byte(l.body)); err == nil {
				l.key = p.Key
			}
		}
	case QueueAsyncFailures:
		var rec struct {
			RequestContext struct {
				Condition string `json:"condition"`
				Count     int    `json:"approximateInvokeCount"`
			} `json:"requestContext"`
			RequestPayload  json.RawMessage `json:"requestPayload"`
			ResponsePayload struct {
				ErrorMessage string `json:"errorMessage"`
			} `json:"responsePayload"`
		}
		if json.Unmarshal([]byte(l.body), &rec) == nil {
			l.Reason = fmt.Sprintf("%s after %d invocations: %s", rec.RequestContext.Condition, rec.RequestContext.Count, rec.ResponsePayload.ErrorMessage)
			if q.Schema != nil {
				if p, err := q.Schema.DecodePayload(rec.RequestPayload); err == nil {
					l.key = p.Key
				}
			}
		}
	case QueueStreamFailures:
		var rec struct {
			RequestContext struct {
				Condition string `json:"condition"`
			} `json:"requestContext"`
			Batch struct {
				Shard string `json:"shardId"`
				Start string `json:"startSequenceNumber"`
				End   string `json:"endSequenceNumber"`
				Size  int    `json:"batchSize"`
			} `json:"DDBStreamBatchInfo"`
		}
		if json.Unmarshal([]byte(l.body), &rec) == nil {
			l.Reason = fmt.Sprintf("%s: %d records of shard %s, sequence %s to %s", rec.RequestContext.Condition, rec.Batch.Size,
				rec.Batch.Shard, rec.Batch.Start, rec.Batch.End)
			if q.Table != "" {
				l.Reason += " of table " + q.Table + "'s stream (a redrive repairs the table)"
			}
		}
	}
	if l.key != (contract.Key{}) {
		l.Key = l.key.String()
	}
	if l.Reason == "" {
		l.Reason = "unreadable message"
	}
	return l
}

// DeadLetters lists every failure queue's messages, decoded, without
// consuming them (at most max per queue). The queues are read at once,
// so their final long polls wait together.
func (w *World) DeadLetters(ctx context.Context, max int) ([]Letter, error) {
	qs := w.Stack.FailureQueues()
	got := make([][]Letter, len(qs))
	errs := make([]error, len(qs))
	var wg sync.WaitGroup
	for i, q := range qs {
		wg.Go(func() { got[i], errs[i] = w.peek(ctx, q, max) })
	}
	wg.Wait()
	return slices.Concat(got...), errors.Join(errs...)
}

// Redriven is what a redrive did with one message.
type Redriven struct {
	Letter
	// Action: "resent" to the work queue, "invoked" the function,
	// "repaired <table>, deleted" (a stream failure: its table repaired,
	// then the record deleted), "kept" (a poisoned message, which the
	// worker cannot read), "would resend"/"would invoke"/"would
	// repair ..." on a dry run, or "failed: ..." (kept).
	Action string `json:"action"`
}

// Redrive re-sends every failure queue's messages where they belong,
// each deleted only after its re-send succeeded: a dead letter of the
// cancellation FIFO goes back to the FIFO queue with its group and
// deduplication id (a second re-send within SQS's five-minute window is
// dropped, and after it the worker's actions are idempotent); a
// scheduler dead letter or an asynchronous failure is invoked again,
// asynchronously, on its function (the claim absorbs a second firing).
// A stream failure names a shard and a range of sequence numbers, not
// items, and the stream keeps records 24 hours only
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html),
// so its items cannot be read back: the records are answered by one pass of the reconciler's
// repair over the table the stream belongs to (Repair, as drift --repair),
// and deleted only after that pass ended without an error (redriveStream).
// A redrive stopped part-way and run again loses nothing (a message is
// deleted only after its re-send or repair) and duplicates nothing the
// claim or the dedup id would not absorb.
func (w *World) Redrive(ctx context.Context, dryRun bool, max int) ([]Redriven, error) {
	var out []Redriven
	at := map[string]int{} // a kept message read again is one entry
	for _, q := range w.Stack.FailureQueues() {
		if q.Kind == QueueStreamFailures {
			rs, err := w.redriveStream(ctx, q, dryRun, max)
			out = append(out, rs...)
			if err != nil {
				return out, err
			}
			continue
		}
		for {
			ls, err := w.take(ctx, q, 10, dryRun)
			if err != nil {
				return out, err
			}
			moved := 0
			for _, l := range ls {
				r := Redriven{Letter: l, Action: w.redriveOne(ctx, l, dryRun)}
				if r.Action == "resent" || r.Action == "invoked" {
					moved++
				}
				if i, ok := at[l.ID]; ok {
					out[i] = r
					continue
				}
				at[l.ID] = len(out)
				out = append(out, r)
				w.progress(len(out), 0, fmt.Sprintf("%s: %d message(s) handled", q.Name, len(out)))
			}
			if dryRun || moved == 0 || len(out) >= max {
				break
			}
		}
	}
	return out, nil
}

// take receives up to n messages for a redrive; a dry run peeks.
func (w *World) take(ctx context.Context, q Queue, n int, dryRun bool) ([]Letter, error) {
	if dryRun {
		return w.peek(ctx, q, 1000)
	}
	r, err := w.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q.URL),
		MaxNumberOfMessages: int32(n), VisibilityTimeout: w.visibility(), WaitTimeSeconds: w.pollWait(),
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"}})
	if err != nil {
		return nil, fmt.Errorf("receive from %s: %w", q.Name, err)
	}
	var out []Letter
	for _, m := range r.Messages {
		out = append(out, decode(q, m))
	}
	return out, nil
}

// ErrRedriveSend marks a re-send that failed (the message is kept).
var ErrRedriveSend = errors.New("re-send failed")

func (w *World) redriveOne(ctx context.Context, l Letter, dryRun bool) string {
	q := l.queue
	var send func() error
	switch {
	case q.Kind == QueueDeadLetters && l.key == (contract.Key{}):
		// Poisoned: the worker cannot read it, and would send it back.
		if !dryRun {
			w.release(ctx, l)
		}
		return "kept (poisoned: delete it by hand)"
	case q.Kind == QueueDeadLetters && q.Target != "":
		if dryRun {
			return "would resend"
		}
		send = func() error {
			in := &sqs.SendMessageInput{QueueUrl: aws.String(q.Target), MessageBody: aws.String(l.body)}
			if l.group != "" {
				in.MessageGroupId = aws.String(l.group)
			}
			if l.dedup != "" {
				in.MessageDeduplicationId = aws.String(l.dedup)
			}
			_, err := w.SQS.SendMessage(ctx, in)
			return err
		}
	case (q.Kind == QueueSchedulerDeadLetters || q.Kind == QueueAsyncFailures) && q.Target != "":
		if dryRun {
			return "would invoke"
		}
		payload := []byte(l.body)
		if q.Kind == QueueAsyncFailures {
			var rec struct {
				RequestPayload json.RawMessage `json:"requestPayload"`
			}
			if err := json.Unmarshal(payload, &rec); err != nil || len(rec.RequestPayload) == 0 {
				w.release(ctx, l)
				return "failed: no request payload in the message (kept)"
			}
			payload = rec.RequestPayload
		}
		send = func() error {
			_, err := w.Lambda.Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(q.Target),
				InvocationType: lambdatypes.InvocationTypeEvent, Payload: payload})
			return err
		}
	default:
		if !dryRun {
			w.release(ctx, l)
		}
		return "kept"
	}
	if err := send(); err != nil {
		w.release(ctx, l)
		return fmt.Sprintf("failed: %v (kept)", fmt.Errorf("%w: %w", ErrRedriveSend, err))
	}
	if _, err := w.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: aws.String(l.receipt)}); err != nil {
		// Re-sent and not deleted: a second redrive re-sends it, which
		// the dedup id or the claim absorbs.
		return fmt.Sprintf("resent, not deleted: %v", err)
	}
	if q.Kind == QueueDeadLetters {
		return "resent"
	}
	return "invoked"
}

// release makes a message visible again at once.
func (w *World) release(ctx context.Context, l Letter) {
	_, _ = w.SQS.ChangeMessageVisibility(context.WithoutCancel(ctx), &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(l.queue.URL), ReceiptHandle: aws.String(l.receipt), VisibilityTimeout: 0})
}

// lettersFor are the failure queues' messages about key k.
func (w *World) lettersFor(ctx context.Context, k contract.Key) ([]Letter, error) {
	all, err := w.DeadLetters(ctx, 1000)
	var out []Letter
	for _, l := range all {
		if l.key == k {
			out = append(out, l)
		}
	}
	return out, err
}

// streamHold is how long a redrive hides the stream failure records it
// holds while the repair pass runs (a pass over a large table takes
// minutes): the longest visibility timeout SQS allows, 12 hours
// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_ChangeMessageVisibility.html).
const streamHold = 12 * 60 * 60

// redriveStream answers the stream failure records of q: it takes them
// all (up to max), runs one repair pass over the table whose stream they
// come from, and deletes them only when that pass ended without an
// error; otherwise each is kept (made visible again). The records are
// taken before the pass starts, so every change they stand for was in
// the table when the pass read it. A dry run says what it would do.
func (w *World) redriveStream(ctx context.Context, q Queue, dryRun bool, max int) ([]Redriven, error) {
	var held []Letter
	if dryRun {
		ls, err := w.peek(ctx, q, max)
		if err != nil {
			return nil, err
		}
		held = ls
	} else {
		seen := map[string]bool{}
		for len(held) < max {
			ls, err := w.take(ctx, q, 10, false)
			if err != nil {
				w.releaseAll(ctx, held)
				return nil, err
			}
			fresh := 0
			for _, l := range ls {
				if !seen[l.ID] {
					seen[l.ID], fresh = true, fresh+1
					held = append(held, l)
				}
			}
			if fresh == 0 {
				break
			}
		}
	}
	if len(held) == 0 {
		return nil, nil
	}
	out := make([]Redriven, len(held))
	action := func(a string) {
		for i, l := range held {
			out[i] = Redriven{Letter: l, Action: a}
		}
	}
	if q.Table == "" {
		action("kept (the stream's table is unknown: run drift --repair --table <its table>, then delete it by hand)")
		w.releaseAll(ctx, held)
		return out, nil
	}
	if dryRun {
		action(fmt.Sprintf("would repair %s (one drift --repair pass), then delete: the record names sequence numbers, not items", q.Table))
		return out, nil
	}
	for _, l := range held {
		_, _ = w.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q.URL),
			ReceiptHandle: aws.String(l.receipt), VisibilityTimeout: streamHold})
	}
	w.progress(0, 0, fmt.Sprintf("%s: %d stream failure record(s): repairing %s", q.Name, len(held), q.Table))
	rs, err := w.Repair(ctx, q.Table, "")
	if err == nil && (len(rs) != 1 || rs[0].Repaired == nil || rs[0].Repaired.Errors > 0 || !rs[0].Repaired.Completed) {
		err = fmt.Errorf("the repair pass of %s did not complete without errors", q.Table)
	}
	if err != nil {
		action(fmt.Sprintf("failed: repair of %s: %v (kept)", q.Table, err))
		w.releaseAll(ctx, held)
		return out, nil
	}
	done := fmt.Sprintf("repaired %s (%d repairs), deleted", q.Table, rs[0].Repaired.Repaired())
	for i, l := range held {
		out[i] = Redriven{Letter: l, Action: done}
		if _, err := w.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: aws.String(l.receipt)}); err != nil {
			// Repaired and not deleted: a second redrive repairs again,
			// which finds nothing more to do.
			out[i].Action = fmt.Sprintf("repaired %s, not deleted: %v", q.Table, err)
		}
	}
	return out, nil
}

// releaseAll makes the messages visible again at once.
func (w *World) releaseAll(ctx context.Context, ls []Letter) {
	for _, l := range ls {
		w.release(ctx, l)
	}
}
