package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/futureevents/futureevent"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// endpoint is the shared dynalite's; "" when it could not start
// (dynaliteErr says why).
var (
	endpoint    string
	dynaliteErr error
)

func TestMain(m *testing.M) {
	d, err := testenv.LaunchDynalite()
	if err != nil {
		dynaliteErr = err
		os.Exit(m.Run())
	}
	endpoint = d.Endpoint
	code := m.Run()
	d.Stop()
	os.Exit(code)
}

var now = time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)

const target = "arn:aws:lambda:us-east-1:123456789012:function:remind"

// scenario runs one history of calls against api (a table keyed by
// futureevent.NameAttr) and checks each result.
func scenario(t *testing.T, api API, table string) {
	ctx := context.Background()
	c, err := New(api, table)
	if err != nil {
		t.Fatal(err)
	}
	c = c.WithClock(func() time.Time { return now })
	at := now.Add(30 * 24 * time.Hour)
	schedule := func(name string, at time.Time, target, payload string) func() error {
		return func() error { return c.Schedule(ctx, name, at, target, []byte(payload)) }
	}
	steps := []struct {
		name    string
		do      func() error
		wantErr error
	}{
		{"first schedule", schedule("ann-2027", at, target, `{"email":"ann@example.com"}`), nil},
		{"same name, same input (key order, spaces aside) is no duplicate", schedule("ann-2027", at, target, `{ "email" : "ann@example.com" }`), nil},
		{"same name, another moment is a conflict", schedule("ann-2027", at.Add(time.Hour), target, `{"email":"ann@example.com"}`), futureevent.ErrNameConflict},
		{"same name, another payload is a conflict", schedule("ann-2027", at, target, `{"email":"bob@example.com"}`), futureevent.ErrNameConflict},
		{"same name, another target is a conflict", schedule("ann-2027", at, target+"2", `{"email":"ann@example.com"}`), futureevent.ErrNameConflict},
		{"the event reads back, scheduled", func() error {
			e, status, err := c.Get(ctx, "ann-2027")
			if err == nil && (status != futureevent.Scheduled || !e.At.Equal(at) || e.Target != target) {
				err = fmt.Errorf("got %+v %s", e, status)
			}
			return err
		}, nil},
		{"cancel", func() error { return c.Cancel(ctx, "ann-2027") }, nil},
		{"it is gone", func() error { _, _, err := c.Get(ctx, "ann-2027"); return err }, futureevent.ErrNotFound},
		{"cancel again: already gone is success", func() error { return c.Cancel(ctx, "ann-2027") }, nil},
		{"cancel of a name never scheduled is success", func() error { return c.Cancel(ctx, "never-2027") }, nil},
		{"the cancelled name is free again, for any input", schedule("ann-2027", at.Add(time.Hour), target, `{}`), nil},
		{"an invalid name to cancel", func() error { return c.Cancel(ctx, "ann@example.com") }, futureevent.ErrInvalid},
	}
	for _, s := range steps {
		err := s.do()
		if s.wantErr == nil && err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if s.wantErr != nil && !errors.Is(err, s.wantErr) {
			t.Fatalf("%s: got %v, want %v", s.name, err, s.wantErr)
		}
	}
}

// TestClientAgainstDynalite runs the history against dynalite, which
// evaluates the client's condition expressions as DynamoDB does.
func TestClientAgainstDynalite(t *testing.T) {
	if endpoint == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("dynalite did not start (CI=true: it must): %v", dynaliteErr)
		}
		t.Skipf("dynalite did not start: %v", dynaliteErr)
	}
	db := testenv.DynamoClient(t, endpoint)
	testenv.CreateItemTable(t, db, "FutureEvents", futureevent.Schema())
	scenario(t, db, "FutureEvents")

	// A fired event (the core's claim wrote Fired): Cancel leaves it, and
	// a Schedule of the same name with another input is a conflict.
	ctx := context.Background()
	c, _ := New(db, "FutureEvents")
	c = c.WithClock(func() time.Time { return now })
	at := now.Add(time.Hour)
	if err := c.Schedule(ctx, "fired", at, target, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("FutureEvents"),
		Key: key("fired"), UpdateExpression: aws.String("SET #s = :f"), ExpressionAttributeNames: map[string]string{"#s": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":f": &types.AttributeValueMemberS{Value: futureevent.Fired}}}); err != nil {
		t.Fatal(err)
	}
	if err := c.Cancel(ctx, "fired"); err != nil {
		t.Fatalf("cancel of a fired event: %v", err)
	}
	if _, status, err := c.Get(ctx, "fired"); err != nil || status != futureevent.Fired {
		t.Fatalf("the fired event after Cancel: %s, %v", status, err)
	}
	if err := c.Schedule(ctx, "fired", at, target, []byte(`{"x":1}`)); !errors.Is(err, futureevent.ErrNameConflict) || !strings.Contains(err.Error(), "Fired") {
		t.Fatalf("reschedule of a fired event: %v", err)
	}
}

// countingAPI counts the calls and can fail them.
type countingAPI struct {
	calls int
	err   error
}

func (f *countingAPI) PutItem(context.Context, *dynamodb.PutItemInput, ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.calls++
	return &dynamodb.PutItemOutput{}, f.err
}

func (f *countingAPI) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	f.calls++
	return &dynamodb.GetItemOutput{}, f.err
}

func (f *countingAPI) DeleteItem(context.Context, *dynamodb.DeleteItemInput, ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	f.calls++
	return &dynamodb.DeleteItemOutput{}, f.err
}

func TestClientErrors(t *testing.T) {
	f := &countingAPI{}
	c, _ := New(f, "FutureEvents")
	c = c.WithClock(func() time.Time { return now })
	ctx := context.Background()
	boom := errors.New("throttled")
	for _, tc := range []struct {
		name, ev, target, payload string
		at                        time.Time
		apiErr, want              error
		wantText                  string
	}{
		{name: "past moment", ev: "a", at: now.Add(-time.Second), target: target, want: futureevent.ErrInvalid, wantText: "not in the future"},
		{name: "beyond the timer's horizon", ev: "a", at: now.Add(futureevent.MaxHorizon + time.Second), target: target, want: futureevent.ErrInvalid, wantText: "at most one year"},
		{name: "no target", ev: "a", at: now.Add(time.Hour), want: futureevent.ErrInvalid, wantText: "AddTarget"},
		{name: "payload not JSON", ev: "a", at: now.Add(time.Hour), target: target, payload: "{", want: futureevent.ErrInvalid},
		{name: "invalid name", ev: "ann@example.com", at: now.Add(time.Hour), target: target, want: futureevent.ErrInvalid, wantText: "futureevent.Name"},
		{name: "service error is wrapped", ev: "b", at: now.Add(time.Hour), target: target, apiErr: boom, want: boom},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.err = tc.apiErr
			calls := f.calls
			err := c.Schedule(ctx, tc.ev, tc.at, tc.target, []byte(tc.payload))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.wantText) {
				t.Fatalf("got %v, want %v with %q", err, tc.want, tc.wantText)
			}
			if errors.Is(tc.want, futureevent.ErrInvalid) && f.calls != calls {
				t.Fatal("an invalid request reached DynamoDB")
			}
		})
	}
	f.err = boom
	if err := c.Cancel(ctx, "b"); !errors.Is(err, boom) {
		t.Fatalf("cancel: %v", err)
	}
	if _, err := New(f, ""); err == nil || !strings.Contains(err.Error(), futureevent.EnvTableName) {
		t.Fatalf("New without a table: %v", err)
	}
}
