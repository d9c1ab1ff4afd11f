package memory

import (
	"context"
	"errors"
	"fmt"
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

func TestSchedulerSemantics(t *testing.T) {
	ctx := context.Background()
	s := NewCampaignScheduler(nil)
	r := campaign.ScheduleRequest{Name: "camp-x", ClientToken: "a"}
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
	if ok, _ := s.Exists(ctx, "", "camp-x"); !ok {
		t.Fatal("not found")
	}
	if err := s.Delete(ctx, "", "camp-x"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "", "camp-x"); !errors.Is(err, campaign.ErrScheduleNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	s.Fault = func(string, string) (error, bool) { return errors.New("reset"), true }
	if err := s.Create(ctx, r); err == nil || len(s.Schedules()) != 1 {
		t.Fatalf("lost answer: %v, %d schedules (want the create applied)", err, len(s.Schedules()))
	}
	if st := s.Stats(); st.Creates != 2 || st.Calls != 7 {
		t.Fatalf("stats %+v", st)
	}
	lim := NewCampaignScheduler(NewBucket(clock.NewFake(t0), 1, 1))
	_ = lim.Create(ctx, r)
	if err := lim.Create(ctx, r2); !errors.Is(err, campaign.ErrThrottled) || lim.Stats().Throttled != 1 {
		t.Fatalf("over the bucket: %v", err)
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

// BenchmarkCampaignStoreOpen walks the open index of 20 campaigns of 500
// tasks, a third of them ended, in pages of 100 (the reconciler's read);
// "writes" ends one more task between pages, as sends do (untimed).
func BenchmarkCampaignStoreOpen(b *testing.B) {
	ctx := context.Background()
	for _, writes := range []bool{false, true} {
		name := "reads"
		if writes {
			name = "writes"
		}
		b.Run(name, func(b *testing.B) {
			st := NewCampaignStore()
			var open []campaign.SendTask
			for c := range 20 {
				id := fmt.Sprintf("c%02d", c)
				st.PutCampaign(campaign.Campaign{ID: id, Status: campaign.Active, Total: 500})
				for i := range 500 {
					task := campaign.SendTask{CampaignID: id, ID: campaign.TaskID(id, i), Index: i, State: campaign.Pending, SendAt: t0}
					if i%3 == 0 {
						task.State = campaign.Cancelled
					} else {
						open = append(open, task)
					}
					st.PutTasks(task)
				}
			}
			ended := 0
			b.ResetTimer()
			for b.Loop() {
				for cur, first := "", true; first || cur != ""; first = false {
					page, next, err := st.Open(ctx, cur, 100)
					if err != nil || len(page) == 0 {
						b.Fatalf("page of %d, %v", len(page), err)
					}
					if writes {
						b.StopTimer()
						if ended == len(open) { // every task ended: open them again
							st.PutTasks(open...)
							ended = 0
						}
						next, _ := campaign.Cancel(open[ended], "r", t0)
						if err := st.Replace(ctx, open[ended], next); err != nil {
							b.Fatal(err)
						}
						ended++
						b.StartTimer()
					}
					cur = next
				}
			}
		})
	}
}
