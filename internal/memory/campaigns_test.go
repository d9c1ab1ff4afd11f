package memory

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/clock"
)

var t0 = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

func TestBucket(t *testing.T) {
	c := clock.NewFake(t0)
	b := NewBucket(c, 50, 10)
	n := 0
	for b.Take() {
		n++
	}
	if n != 10 {
		t.Fatalf("burst %d, want 10", n)
	}
	drain := func() int {
		n := 0
		for b.Take() {
			n++
		}
		return n
	}
	c.Advance(time.Second)
	if n := drain(); n != 10 { // refilled up to the burst, not 50
		t.Fatalf("after a second %d, want the burst 10", n)
	}
	c.Advance(100 * time.Millisecond)
	if n := drain(); n != 5 {
		t.Fatalf("100 ms at 50/s gave %d tokens, want 5", n)
	}
}

func TestSenderSendsOncePerKey(t *testing.T) {
	ctx := context.Background()
	s := NewCampaignSender(clock.NewFake(t0))
	if _, err := s.Sent(ctx, "k"); !errors.Is(err, campaign.ErrNotSent) {
		t.Fatal(err)
	}
	a, _ := s.Send(ctx, campaign.Message{IdempotencyKey: "k"})
	b, _ := s.Send(ctx, campaign.Message{IdempotencyKey: "k"})
	if a != b || len(s.Outbox) != 1 || s.Count("k") != 1 {
		t.Fatalf("%v %v %d", a, b, len(s.Outbox))
	}
	s.Fault = func(campaign.Message) error { return campaign.ErrRetryable }
	if _, err := s.Send(ctx, campaign.Message{IdempotencyKey: "j"}); !errors.Is(err, campaign.ErrRetryable) || len(s.Outbox) != 1 {
		t.Fatal("a failed send was recorded")
	}
}

func TestStoreConditions(t *testing.T) {
	ctx := context.Background()
	st := NewCampaignStore()
	task := campaign.SendTask{CampaignID: "c", ID: "c-00000", State: campaign.Pending, SendAt: t0}
	st.PutTasks(task)
	claimed, err := st.Claim(ctx, task.Key(), t0, t0, time.Minute)
	if err != nil || claimed.State != campaign.Running {
		t.Fatal(err)
	}
	if _, err := st.Claim(ctx, task.Key(), t0, t0, time.Minute); !errors.Is(err, campaign.ErrConditionFailed) {
		t.Fatalf("second claim: %v", err)
	}
	done, _ := campaign.Finish(claimed, t0, "m", t0)
	if err := st.Replace(ctx, task, done); !errors.Is(err, campaign.ErrConditionFailed) {
		t.Fatalf("replace from a stale read: %v", err)
	}
	if err := st.Replace(ctx, claimed, done); err != nil {
		t.Fatal(err)
	}
	if open, _, _ := st.Open(ctx, "", 10); len(open) != 0 || st.CountOpen("c") != 0 {
		t.Fatal("a Finished task is open")
	}
	st.PutTasks(campaign.SendTask{CampaignID: "c", ID: "c-00001", Index: 1, State: campaign.Pending}, campaign.SendTask{CampaignID: "c", ID: "c-00002", Index: 2, State: campaign.Running})
	page, cursor, _ := st.Open(ctx, "", 1)
	page2, end, _ := st.Open(ctx, cursor, 1)
	if len(page) != 1 || len(page2) != 1 || end != "" || page[0].ID != "c-00001" || page2[0].ID != "c-00002" {
		t.Fatalf("paging: %v %q %v %q", page, cursor, page2, end)
	}
	if l, _ := st.List(ctx, "c", 1, 5); len(l) != 2 || l[0].Index != 1 {
		t.Fatalf("list %v", l)
	}
}

// endAll drives each task of c to a terminal state (sent, failed,
// cancelled in turn) through the store's conditional writes, and returns
// the statuses the campaign had after each.
func endAll(t *testing.T, st interface {
	campaign.Tasks
	campaign.Campaigns
}, c campaign.Campaign) []campaign.Status {
	t.Helper()
	ctx := context.Background()
	var seen []campaign.Status
	for i := range c.Total {
		k := campaign.Key{CampaignID: c.ID, TaskID: campaign.TaskID(c.ID, i)}
		prev, err := st.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		var next campaign.SendTask
		switch i % 3 {
		case 0:
			if prev, err = st.Claim(ctx, k, prev.SendAt, t0, time.Minute); err == nil {
				next, err = campaign.Finish(prev, t0, "m", t0)
			}
		case 1:
			next, err = campaign.Fail(prev, "bounced", t0)
		default:
			next, err = campaign.Cancel(prev, "r", t0)
		}
		if err == nil {
			err = st.Replace(ctx, prev, next)
		}
		if err != nil {
			t.Fatal(err)
		}
		// At-least-once: the same write again is refused, changes nothing.
		if err := st.Replace(ctx, prev, next); !errors.Is(err, campaign.ErrConditionFailed) {
			t.Fatalf("repeated write: %v", err)
		}
		got, _ := st.Campaign(ctx, c.ID)
		seen = append(seen, got.Status)
	}
	return seen
}

func TestCampaignCompletesWhenItsLastTaskEnds(t *testing.T) {
	for _, from := range []campaign.Status{campaign.Active, campaign.Provisioning, campaign.CampaignCancelled} {
		t.Run(string(from), func(t *testing.T) {
			st := NewCampaignStore()
			c := campaign.Campaign{ID: "c1", Status: from, Total: 3}
			st.PutCampaign(c)
			for i := range 3 {
				st.PutTasks(campaign.SendTask{CampaignID: "c1", ID: campaign.TaskID("c1", i), Index: i, State: campaign.Pending, SendAt: t0})
			}
			want := []campaign.Status{from, from, campaign.Completed}
			if from == campaign.CampaignCancelled {
				want[2] = from // a cancelled campaign stays cancelled
			}
			if got := endAll(t, st, c); !slices.Equal(got, want) {
				t.Fatalf("statuses %v, want %v", got, want)
			}
			// Provisioning's own move to Active comes too late and is refused.
			err := st.SetStatus(context.Background(), "c1", []campaign.Status{campaign.Draft, campaign.Provisioning}, campaign.Active, "", t0)
			if from == campaign.Provisioning && !errors.Is(err, campaign.ErrConditionFailed) {
				t.Fatalf("Provisioning → Active after completion: %v", err)
			}
		})
	}
}

// TestCampaignStoreIsNoMoreLenientThanDynamo: what dynamo.CampaignStore
// refuses, the memory store refuses too, and every conditional write
// goes through the fault injector first.
func TestCampaignStoreIsNoMoreLenientThanDynamo(t *testing.T) {
	ctx := context.Background()
	injected := errors.New("injected")
	for _, tc := range []struct {
		name string
		call func(s *CampaignStore) error
		want error // nil: any error
	}{
		{"list from before the first task", func(s *CampaignStore) error { _, err := s.List(ctx, "c", -1, 5); return err }, nil},
		{"list no tasks", func(s *CampaignStore) error { _, err := s.List(ctx, "c", 0, 0); return err }, nil},
		{"set status from nothing", func(s *CampaignStore) error {
			return s.SetStatus(ctx, "c", nil, campaign.CampaignCancelled, "", t0)
		}, nil},
		{"replace with another key", func(s *CampaignStore) error {
			a := campaign.SendTask{CampaignID: "c", ID: campaign.TaskID("c", 0), State: campaign.Pending}
			b := a
			b.ID = campaign.TaskID("c", 1)
			return s.Replace(ctx, a, b)
		}, nil},
		{"open with a damaged cursor", func(s *CampaignStore) error { _, _, err := s.Open(ctx, "%%%", 5); return err }, campaign.ErrBadCursor},
		{"open with a negative cursor", func(s *CampaignStore) error { _, _, err := s.Open(ctx, "-3", 5); return err }, campaign.ErrBadCursor},
		{"fault on claim", func(s *CampaignStore) error {
			s.Fail = func(op string) error {
				if op == "Claim" {
					return injected
				}
				return nil
			}
			_, err := s.Claim(ctx, campaign.Key{CampaignID: "c", TaskID: campaign.TaskID("c", 0)}, t0, t0, time.Minute)
			return err
		}, injected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewCampaignStore()
			s.PutCampaign(campaign.Campaign{ID: "c", Status: campaign.Active, Total: 2})
			s.PutTasks(campaign.SendTask{CampaignID: "c", ID: campaign.TaskID("c", 0), State: campaign.Pending, SendAt: t0},
				campaign.SendTask{CampaignID: "c", ID: campaign.TaskID("c", 1), Index: 1, State: campaign.Pending, SendAt: t0})
			err := tc.call(s)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
			if s.Writes != 0 {
				t.Fatalf("%d writes, want none", s.Writes)
			}
		})
	}
}
