package boltstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/campaign/limits"
	"github.com/unschedule/unschedule/internal/testenv"
)

var ct0 = testenv.CampaignT0

// TestCampaignStoreContract: the bolt store keeps dynamo.CampaignStore's
// contract: every conditional write fails where DynamoDB's does, with
// the same error.
func TestCampaignStoreContract(t *testing.T) {
	testenv.CampaignStoreContract(t, func(t *testing.T) testenv.CampaignBackend {
		return testenv.CampaignBackend{Store: open(t, t.TempDir()).CampaignStore(), ErrExists: ErrCampaignExists}
	})
}

// TestOwnedRefusesForgedCursors: an owner cursor of another owner, or
// without its time or id, is ErrBadCursor.
func TestOwnedRefusesForgedCursors(t *testing.T) {
	st := open(t, t.TempDir()).CampaignStore()
	for name, c := range map[string]string{
		"another owner": base64.RawURLEncoding.EncodeToString([]byte("owner-2\x00" + keyTime(ct0) + "\x00c1")),
		"no time":       base64.RawURLEncoding.EncodeToString([]byte("owner-1\x00x\x00c1")),
		"no id":         base64.RawURLEncoding.EncodeToString([]byte("owner-1\x00" + keyTime(ct0))),
	} {
		if _, _, err := st.Owned(context.Background(), "owner-1", c, 2); !errors.Is(err, campaign.ErrBadCursor) {
			t.Errorf("Owned, %s: %v, want ErrBadCursor", name, err)
		}
	}
}

func TestCampaignCheckpoints(t *testing.T) {
	testenv.CheckpointContract(t, open(t, t.TempDir()).CampaignCheckpoints())
}

// TestCampaignSchedulerSemantics: the scheduler semantics of
// memory.CampaignScheduler (idempotent create by token, conflict, not found), an
// unreadable expression refused, and Due in time order.
func TestCampaignSchedulerSemantics(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir()).CampaignScheduler()
	r := campaign.ScheduleRequest{Name: "camp-x", ClientToken: "a", Expression: "at(2026-06-01T09:02:00)", Timezone: "Europe/Berlin", MaximumRetryAttempts: 2}
	if err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, r); err != nil {
		t.Fatalf("same token again: %v", err)
	}
	r2 := r
	r2.ClientToken = "b"
	if err := s.Create(ctx, r2); !errors.Is(err, campaign.ErrScheduleExists) {
		t.Fatalf("other token: %v", err)
	}
	early := campaign.ScheduleRequest{Name: "camp-y", ClientToken: "c", Expression: "at(2026-06-01T09:01:00)", Timezone: "Europe/Berlin"}
	if err := s.Create(ctx, early); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []campaign.ScheduleRequest{{Name: "b1", Expression: "rate(1 minute)", Timezone: "UTC"}, {Name: "b2", Expression: r.Expression, Timezone: "Mars/Base"}} {
		if err := s.Create(ctx, bad); err == nil {
			t.Errorf("Create(%+v) succeeded", bad)
		}
	}
	if ok, _ := s.Exists(ctx, "", "camp-x"); !ok {
		t.Fatal("not found")
	}
	for _, c := range []struct {
		at   time.Time
		want string
	}{{ct0.Add(59 * time.Second), "[]"}, {ct0.Add(time.Minute), "[camp-y]"}, {ct0.Add(time.Hour), "[camp-y camp-x]"}} {
		due, err := s.Due(c.at, 10)
		var names []string
		for _, d := range due {
			names = append(names, d.Request.Name)
		}
		if err != nil || fmt.Sprint(names) != c.want {
			t.Errorf("Due(%s) = %v, %v; want %s", c.at, names, err, c.want)
		}
	}
	if n, err := s.Failed("camp-x"); n != 1 || err != nil {
		t.Fatalf("Failed = %d, %v", n, err)
	}
	if err := s.Delete(ctx, "", "camp-x"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "", "camp-x"); !errors.Is(err, campaign.ErrScheduleNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if due, _ := s.Due(ct0.Add(time.Hour), 10); len(due) != 1 {
		t.Fatalf("Due after the delete: %d", len(due))
	}
}

// TestAppendEmailOnce: one email per key, across a reopen.
func TestAppendEmailOnce(t *testing.T) {
	dir := t.TempDir()
	db := open(t, dir)
	if _, found, err := db.EmailOnce("send-c1-00000"); found || err != nil {
		t.Fatalf("EmailOnce before = %v, %v", found, err)
	}
	first, isFirst, err := db.AppendEmailOnce("send-c1-00000", Email{Kind: "campaign", At: ct0, To: []string{"a@example.com"}})
	if err != nil || !isFirst || first.Seq != 1 {
		t.Fatalf("first append = %+v, %v, %v", first, isFirst, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open(t, dir)
	defer db.Close()
	again, isFirst, err := db.AppendEmailOnce("send-c1-00000", Email{Kind: "campaign", At: ct0.Add(time.Hour)})
	if err != nil || isFirst || again.Seq != 1 || !again.At.Equal(ct0) {
		t.Fatalf("second append = %+v, %v, %v: want the first email", again, isFirst, err)
	}
	if got, found, err := db.EmailOnce("send-c1-00000"); !found || err != nil || got.Seq != 1 {
		t.Fatalf("EmailOnce = %+v, %v, %v", got, found, err)
	}
	if all, _ := db.Outbox(); len(all) != 1 {
		t.Fatalf("outbox holds %d emails, want 1", len(all))
	}
}

// TestSenderLimitsContract: the bolt counters answer as limits.Memory
// and limitsdynamo do.
func TestSenderLimitsContract(t *testing.T) {
	testenv.LimitsContract(t, func(t *testing.T) testenv.LimitsBackend {
		l := open(t, t.TempDir()).SenderLimits()
		return testenv.LimitsBackend{Counters: l, Counts: func(_ context.Context, k limits.Key) (map[string]int64, error) { return l.Counts(k) }}
	})
}

func TestSuppressionsContract(t *testing.T) {
	testenv.SuppressionContract(t, open(t, t.TempDir()).Suppressions())
}
