package appsyncevents

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
)

var (
	at    = time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	creds = credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "session-token")
	prog  = campaignapi.Progress{CampaignID: "c1", Status: "Active", AsOf: "2026-12-01T09:30:00Z",
		Counts: map[string]int{"Pending": 1, "Finished": 2}}
)

// received is what the test server saw.
type received struct {
	method, path, contentType, auth, token string
	body                                   []byte
	resigned                               string // Authorization of the same request signed again here
}

func server(t *testing.T, status int, answer string) (*httptest.Server, *received) {
	t.Helper()
	got := &received{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.contentType = r.Method, r.URL.Path, r.Header.Get("Content-Type")
		got.auth, got.token = r.Header.Get("Authorization"), r.Header.Get("X-Amz-Security-Token")
		got.body, _ = io.ReadAll(r.Body)
		// Sign the received body again as the client must have: the same
		// signature proves the signature covers this body.
		when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
		if err == nil {
			again, _ := http.NewRequest(r.Method, "https://"+r.Host+r.URL.Path, bytes.NewReader(got.body))
			again.Header.Set("Content-Type", r.Header.Get("Content-Type"))
			c, _ := creds.Retrieve(context.Background())
			sum := sha256Hex(got.body)
			if v4.NewSigner().SignHTTP(context.Background(), c, again, sum, "appsync", "eu-central-1", when) == nil {
				got.resigned = again.Header.Get("Authorization")
			}
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(answer))
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func newPublisher(t *testing.T, srv *httptest.Server) *Publisher {
	t.Helper()
	p, err := New(srv.URL+"/event", "eu-central-1", creds, srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	p.now = func() time.Time { return at }
	return p
}

// TestPublishPostsASignedEvent: one POST to /event, the body the publish
// API documents (the channel, the Progress as a JSON string), signed with
// SigV4 for appsync in the region, over exactly that body.
func TestPublishPostsASignedEvent(t *testing.T) {
	srv, got := server(t, http.StatusOK, `{"failed":[],"successful":[{"identifier":"x","index":0}]}`)
	if err := newPublisher(t, srv).Publish(context.Background(), "/campaigns/u1/c1", prog); err != nil {
		t.Fatal(err)
	}
	if got.method != http.MethodPost || got.path != "/event" || got.contentType != "application/json" {
		t.Errorf("request %s %s (%s), want POST /event (application/json)", got.method, got.path, got.contentType)
	}
	var b struct {
		Channel string   `json:"channel"`
		Events  []string `json:"events"`
	}
	if err := json.Unmarshal(got.body, &b); err != nil || b.Channel != "/campaigns/u1/c1" || len(b.Events) != 1 {
		t.Fatalf("body %s (%v): want the channel and one event", got.body, err)
	}
	var p campaignapi.Progress
	if err := json.Unmarshal([]byte(b.Events[0]), &p); err != nil || !reflect.DeepEqual(p, prog) {
		t.Errorf("event %s = %+v (%v), want %+v", b.Events[0], p, err, prog)
	}
	for _, want := range []string{"AWS4-HMAC-SHA256 ", "Credential=AKIDEXAMPLE/20261201/eu-central-1/appsync/aws4_request", "SignedHeaders=", "host", "x-amz-date", "Signature="} {
		if !strings.Contains(got.auth, want) {
			t.Errorf("Authorization %q lacks %q", got.auth, want)
		}
	}
	if got.token != "session-token" {
		t.Errorf("X-Amz-Security-Token = %q, want the session token", got.token)
	}
	if got.resigned == "" || got.resigned != got.auth {
		t.Errorf("signature does not cover the body sent:\n got  %s\n want %s", got.auth, got.resigned)
	}
}

func TestPublishErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		answer string
		want   string // "" = no error
	}{
		{"accepted", http.StatusOK, `{"failed":[],"successful":[{"identifier":"x","index":0}]}`, ""},
		{"accepted, no body", http.StatusOK, ``, ""},
		{"refused", http.StatusForbidden, `{"errors":[{"errorType":"UnauthorizedException"}]}`, "HTTP 403"},
		{"throttled", http.StatusTooManyRequests, `slow down`, "HTTP 429: slow down"},
		{"the event failed", http.StatusOK, `{"failed":[{"identifier":"x","index":0,"code":400,"message":"too large"}],"successful":[]}`, "too large"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := server(t, tc.status, tc.answer)
			err := newPublisher(t, srv).Publish(context.Background(), "/campaigns/u1/c1", prog)
			if tc.want == "" && err != nil {
				t.Fatalf("Publish = %v, want nil", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "/campaigns/u1/c1")) {
				t.Fatalf("Publish = %v, want an error naming the channel and saying %q", err, tc.want)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	for _, tc := range []struct {
		name, endpoint, region string
		creds                  aws.CredentialsProvider
	}{
		{"plain http", "http://example.com/event", "eu-central-1", creds},
		{"no region", Endpoint("abc.appsync-api.eu-central-1.amazonaws.com"), "", creds},
		{"no credentials", Endpoint("abc.appsync-api.eu-central-1.amazonaws.com"), "eu-central-1", nil},
	} {
		if _, err := New(tc.endpoint, tc.region, tc.creds, nil); err == nil {
			t.Errorf("%s: New succeeded", tc.name)
		}
	}
	if got := Endpoint("abc.example.com"); got != "https://abc.example.com/event" {
		t.Errorf("Endpoint = %s", got)
	}
}
