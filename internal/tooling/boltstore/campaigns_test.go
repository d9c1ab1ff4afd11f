package boltstore

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	"github.com/unschedule/unschedule/internal/core/timer"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

var ct0 = testenv.CampaignT0

// TestCampaignStoreContract: the bolt store keeps the contract of
// campaigntable.CampaignStore: every conditional write fails where
// DynamoDB's does, with the same error.
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

// TestCampaignSchedulesRoundTrip: what the dev campaign timer holds is
// saved and read back across a reopen, a replace drops what is gone, and
// two schedules of one name at two due times (Step Functions executions)
// are both kept.
func TestCampaignSchedulesRoundTrip(t *testing.T) {
	dir := t.TempDir()
	d := open(t, dir)
	k := contract.Key{Partition: "C#c", Sort: "T#c-00000"}
	at := func(m int) timer.Schedule {
		due := ct0.Add(time.Duration(m) * time.Minute)
		return timer.Schedule{Name: "camp-x", At: due, ClientToken: "tok", Payload: contract.Payload{Key: k, Due: due}}
	}
	other := timer.Schedule{Name: "camp-y", At: ct0, Payload: contract.Payload{Key: contract.Key{Partition: "C#c", Sort: "T#c-00001"}, Due: ct0}}
	if err := d.ReplaceCampaignSchedules([]timer.Schedule{at(1), other, at(2)}); err != nil {
		t.Fatal(err)
	}
	if err := d.ReplaceCampaignSchedules([]timer.Schedule{at(1), at(2)}); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := open(t, dir).CampaignSchedules()
	if err != nil || len(got) != 2 || got[0] != at(1) || got[1] != at(2) {
		t.Fatalf("%+v %v", got, err)
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
