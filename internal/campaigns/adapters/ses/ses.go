// Package ses is the campaign.Sender of AWS: Amazon SES v2 SendEmail
// behind an idempotency record in the campaign table (layout:
// internal/campaigns/tablekeys, item K#<key> / SEND).
//
// SendEmail has no idempotency token, so a record in the table makes a
// key send at most once: a conditional put "sending", SendEmail, then
// "sent" with the receipt (or the record deleted on a refusal). A record
// left "sending" is an unknown outcome and is never sent again
// (docs/decisions/ses-idempotency.md).
//
// A message with an UnsubscribeURL carries the RFC 8058 headers
// List-Unsubscribe and List-Unsubscribe-Post, which SendEmail accepts in
// Simple content (Message.Headers):
// https://docs.aws.amazon.com/ses/latest/APIReference-V2/API_Message.html
// https://docs.aws.amazon.com/ses/latest/dg/header-fields.html
//
// Suppressions (suppressions.go) is the suppression list in the same table.
package ses

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
	"github.com/unschedule/unschedule/internal/campaigns/unsubscribe"
)

// States of a send record.
const (
	StateSending = "sending"
	StateSent    = "sent"
)

// ErrOutcomeUnknown: an earlier attempt of the key started SendEmail and
// left no receipt; the message is not sent again.
var ErrOutcomeUnknown = errors.New("an earlier attempt may have sent this email (it stopped during SendEmail): not sent again, at most once")

// Mail is the part of the SES v2 client the sender uses.
type Mail interface {
	SendEmail(ctx context.Context, in *sesv2.SendEmailInput, opts ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error)
}

// Records is the part of the DynamoDB client the sender uses.
type Records interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

var (
	_ Mail    = (*sesv2.Client)(nil)
	_ Records = (*dynamodb.Client)(nil)
)

// Config of a Sender.
type Config struct {
	// Table holds the records (the campaign table).
	Table string
	// From is the verified SES identity's address the emails come from.
	From string
	// ConfigurationSet is the SES configuration set, if any.
	// Default: none.
	ConfigurationSet string
}

// Sender is a campaign.Sender.
type Sender struct {
	mail    Mail
	records Records
	cfg     Config
	clock   campaign.Clock
}

var _ campaign.Sender = (*Sender)(nil)

// New returns a Sender.
func New(mail Mail, records Records, cfg Config, clock campaign.Clock) (*Sender, error) {
	if mail == nil || records == nil || clock == nil || cfg.Table == "" || cfg.From == "" {
		return nil, errors.New("ses: an SES client, a DynamoDB client, a clock, the table and the From address are required")
	}
	return &Sender{mail: mail, records: records, cfg: cfg, clock: clock}, nil
}

func key(k string) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{
		tk.PartitionKey: &ddbtypes.AttributeValueMemberS{Value: tk.SendPrefix + k},
		tk.SortKey:      &ddbtypes.AttributeValueMemberS{Value: tk.SendSK},
	}
}

func sv(v string) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberS{Value: v} }

func str(m map[string]ddbtypes.AttributeValue, k string) string {
	if v, ok := m[k].(*ddbtypes.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// Send implements campaign.Sender.
func (s *Sender) Send(ctx context.Context, m campaign.Message) (campaign.Receipt, error) {
	if m.IdempotencyKey == "" {
		return campaign.Receipt{}, errors.New("ses: a message needs an idempotency key")
	}
	rec := key(m.IdempotencyKey)
	rec["state"], rec["to"], rec["startedAt"] = sv(StateSending), sv(m.To), sv(s.clock.Now().UTC().Format(time.RFC3339Nano))
	_, err := s.records.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.cfg.Table), Item: rec,
		ConditionExpression: aws.String("attribute_not_exists(pk)")})
	var cf *ddbtypes.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		r, err := s.Sent(ctx, m.IdempotencyKey)
		if errors.Is(err, campaign.ErrNotSent) {
			return campaign.Receipt{}, fmt.Errorf("send %s: %w", m.IdempotencyKey, ErrOutcomeUnknown)
		}
		return r, err
	}
	if err != nil {
		return campaign.Receipt{}, fmt.Errorf("send %s: record: %w (%w)", m.IdempotencyKey, campaign.ErrRetryable, err)
	}
	in := &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(s.cfg.From),
		Destination:      &types.Destination{ToAddresses: []string{m.To}},
		Content: &types.EmailContent{Simple: &types.Message{
			Subject: &types.Content{Data: aws.String(m.Subject), Charset: aws.String("UTF-8")},
			Body:    &types.Body{Text: &types.Content{Data: aws.String(m.Body), Charset: aws.String("UTF-8")}},
		}},
		EmailTags: []types.MessageTag{{Name: aws.String("idempotencyKey"), Value: aws.String(m.IdempotencyKey)}},
	}
	if m.UnsubscribeURL != "" {
		for _, h := range unsubscribe.Headers(m.UnsubscribeURL) {
			in.Content.Simple.Headers = append(in.Content.Simple.Headers, types.MessageHeader{Name: aws.String(h[0]), Value: aws.String(h[1])})
		}
	}
	if s.cfg.ConfigurationSet != "" {
		in.ConfigurationSetName = aws.String(s.cfg.ConfigurationSet)
	}
	out, sendErr := s.mail.SendEmail(ctx, in)
	if sendErr != nil {
		if refused(sendErr) {
			// SES answered: nothing was sent; free the key for a retry.
			_, _ = s.records.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.cfg.Table), Key: key(m.IdempotencyKey),
				ConditionExpression: aws.String("#s = :sending"), ExpressionAttributeNames: map[string]string{"#s": "state"},
				ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":sending": sv(StateSending)}})
		}
		return campaign.Receipt{}, fmt.Errorf("send %s: %w", m.IdempotencyKey, classify(sendErr))
	}
	r := campaign.Receipt{MessageID: aws.ToString(out.MessageId), SentAt: s.clock.Now().UTC()}
	// The email is out: record the receipt. A failure here leaves the
	// record "sending" (see the package doc) but must not fail the send.
	for try := 0; try < 3; try++ {
		_, err = s.records.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.cfg.Table), Key: key(m.IdempotencyKey),
			UpdateExpression:         aws.String("SET #s = :sent, messageId = :id, sentAt = :at"),
			ExpressionAttributeNames: map[string]string{"#s": "state"},
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":sent": sv(StateSent), ":id": sv(r.MessageID),
				":at": sv(r.SentAt.Format(time.RFC3339Nano))}})
		if err == nil {
			break
		}
	}
	return r, nil
}

// Sent implements campaign.Sender: the receipt of a "sent" record;
// ErrNotSent for none or one left "sending".
func (s *Sender) Sent(ctx context.Context, k string) (campaign.Receipt, error) {
	out, err := s.records.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.cfg.Table), Key: key(k), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return campaign.Receipt{}, fmt.Errorf("read send record %s: %w", k, err)
	}
	if str(out.Item, "state") != StateSent {
		return campaign.Receipt{}, fmt.Errorf("send record %s: %w", k, campaign.ErrNotSent)
	}
	at, err := time.Parse(time.RFC3339Nano, str(out.Item, "sentAt"))
	if err != nil {
		return campaign.Receipt{}, fmt.Errorf("send record %s: sentAt: %w", k, err)
	}
	return campaign.Receipt{MessageID: str(out.Item, "messageId"), SentAt: at}, nil
}

// refused reports whether SES answered with an error (so it sent
// nothing), as opposed to a call whose outcome is unknown (a timeout, a
// cut connection, a 5xx).
func refused(err error) bool {
	var api smithy.APIError
	if !errors.As(err, &api) {
		return false
	}
	var internal *types.InternalServiceErrorException
	return !errors.As(err, &internal) && api.ErrorFault() != smithy.FaultServer
}

// classify: a call whose outcome is unknown is ErrOutcomeUnknown (its
// record stays "sending"; permanent); a refusal that may pass (throttle,
// quota, paused account) is campaign.ErrRetryable; a rejected message or
// address is permanent.
func classify(err error) error {
	var (
		many   *types.TooManyRequestsException
		limit  *types.LimitExceededException
		paused *types.SendingPausedException
	)
	switch {
	case !refused(err):
		return fmt.Errorf("%w (%w)", ErrOutcomeUnknown, err)
	case errors.As(err, &many), errors.As(err, &limit), errors.As(err, &paused):
		return fmt.Errorf("%w (%w)", campaign.ErrRetryable, err)
	}
	return err
}
