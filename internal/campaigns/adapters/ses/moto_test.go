package ses

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/clock"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// TestSendOnMoto sends through the real SES v2 client against moto (the
// request serializes and moto accepts it), with the idempotency record on
// dynalite: the second Send returns the first receipt.
func TestSendOnMoto(t *testing.T) {
	m := testenv.SharedMoto(t)
	defer testenv.StopSharedMoto()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	mail := sesv2.New(sesv2.Options{Region: testenv.MotoRegion, BaseEndpoint: aws.String(m.Endpoint),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")})
	if _, err := mail.CreateEmailIdentity(ctx, &sesv2.CreateEmailIdentityInput{EmailIdentity: aws.String("news@example.com")}); err != nil {
		t.Fatal(err)
	}
	s := newSender(t, nil)
	s.mail = mail
	s.clock = clock.NewFake(time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC))
	r1, err := s.Send(ctx, msg)
	if err != nil || r1.MessageID == "" {
		t.Fatalf("Send = %+v, %v", r1, err)
	}
	r2, err := s.Send(ctx, msg)
	if err != nil || r2 != r1 {
		t.Fatalf("second Send = %+v, %v; want the first receipt %+v", r2, err, r1)
	}
	if got, err := s.Sent(ctx, msg.IdempotencyKey); err != nil || got != r1 {
		t.Fatalf("Sent = %+v, %v", got, err)
	}
	var _ campaign.Sender = s
}
