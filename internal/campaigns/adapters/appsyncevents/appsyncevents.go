// Package appsyncevents publishes a campaign's live progress to an AWS
// AppSync Events API over its HTTP endpoint, signed with SigV4 (IAM
// auth: the caller needs appsync:EventPublish on the channel namespace).
//
// The publish API, as AWS documents it
// (https://docs.aws.amazon.com/appsync/latest/eventapi/publish-http.html):
// POST https://<HTTP DNS>/event with the body
//
//	{"channel": "/campaigns/<owner>/<id>", "events": ["<JSON text>", …]}
//
// (at most 5 events; each is a JSON value written as a string), with the
// authorization of one of the namespace's publish modes; for AWS_IAM the
// request is signed with Signature Version 4 for the service "appsync"
// (https://docs.aws.amazon.com/appsync/latest/eventapi/configure-event-api-auth.html).
package appsyncevents

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/core/clock"
)

// SigningName is the service name of the SigV4 signature.
const SigningName = "appsync"

// DefaultTimeout bounds one publish (the stream retries a failed batch).
const DefaultTimeout = 10 * time.Second

// Endpoint is the publish URL of an Event API's HTTP DNS name.
func Endpoint(httpDNS string) string { return "https://" + httpDNS + "/event" }

// Publisher implements campaignapi.ProgressPublisher.
type Publisher struct {
	endpoint string
	region   string
	creds    aws.CredentialsProvider
	signer   *v4.Signer
	client   *http.Client
	now      func() time.Time
}

var _ campaignapi.ProgressPublisher = (*Publisher)(nil)

// New publishes to endpoint (Endpoint of the API's HTTP DNS), signing as
// creds in region. A nil client is one with DefaultTimeout.
func New(endpoint, region string, creds aws.CredentialsProvider, client *http.Client) (*Publisher, error) {
	if !strings.HasPrefix(endpoint, "https://") {
		return nil, fmt.Errorf("appsyncevents: endpoint must be https://<HTTP DNS>/event (given %q)", endpoint)
	}
	if region == "" || creds == nil {
		return nil, errors.New("appsyncevents: a region and credentials are required to sign")
	}
	if client == nil {
		client = &http.Client{Timeout: DefaultTimeout}
	}
	return &Publisher{endpoint: endpoint, region: region, creds: creds, signer: v4.NewSigner(), client: client, now: clock.System{}.Now}, nil
}

// body is the publish request.
type body struct {
	Channel string   `json:"channel"`
	Events  []string `json:"events"`
}

// response is what the endpoint answers; an event listed as failed is an
// error.
type response struct {
	Failed []json.RawMessage `json:"failed"`
}

// Publish posts p as one event on channel.
func (pub *Publisher) Publish(ctx context.Context, channel string, p campaignapi.Progress) error {
	event, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("encode progress: %w", err)
	}
	payload, err := json.Marshal(body{Channel: channel, Events: []string{string(event)}})
	if err != nil {
		return fmt.Errorf("encode publish request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, pub.endpoint, bytes.NewReader(payload))
	if err != nil {
		return fmt.Errorf("publish to %s: %w", channel, err)
	}
	req.Header.Set("Content-Type", "application/json")
	creds, err := pub.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("publish to %s: credentials: %w", channel, err)
	}
	if err := pub.signer.SignHTTP(ctx, creds, req, sha256Hex(payload), SigningName, pub.region, pub.now()); err != nil {
		return fmt.Errorf("publish to %s: sign: %w", channel, err)
	}
	resp, err := pub.client.Do(req)
	if err != nil {
		return fmt.Errorf("publish to %s: %w", channel, err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("publish to %s: HTTP %d: %s", channel, resp.StatusCode, strings.TrimSpace(string(text)))
	}
	var r response
	if json.Unmarshal(text, &r) == nil && len(r.Failed) > 0 {
		return fmt.Errorf("publish to %s: the event failed: %s", channel, r.Failed[0])
	}
	return nil
}

// sha256Hex is the payload hash SigV4 signs.
func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
