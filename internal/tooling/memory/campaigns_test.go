package memory

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaigntest"
	"github.com/unschedule/unschedule/internal/core/clock"
)

var t0 = time.Date(2026, 6, 1, 8, 0, 0, 0, time.UTC)

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

// TestCampaignStoreContract: the memory store keeps the campaign store
// contract of the DynamoDB adapter, and a refused call writes nothing.
func TestCampaignStoreContract(t *testing.T) {
	campaigntest.CampaignStoreContract(t, func(*testing.T) campaigntest.CampaignBackend {
		s := NewCampaignStore()
		return campaigntest.CampaignBackend{Store: s, ErrExists: ErrCampaignExists,
			Put: func(c campaign.Campaign, tasks []campaign.SendTask) error {
				s.PutCampaign(c)
				s.PutTasks(tasks...)
				return nil
			},
			Writes: func() int { return s.Writes }}
	})
}

// TestOwnedRefusesForgedCursors: an owner cursor of another owner, or
// without its time or id, is ErrBadCursor.
func TestOwnedRefusesForgedCursors(t *testing.T) {
	st := NewCampaignStore()
	at := campaigntest.CampaignT0.Format("2006-01-02T15:04:05.000000000Z")
	for name, c := range map[string]string{
		"another owner": base64.RawURLEncoding.EncodeToString([]byte("owner-2\x00" + at + "\x00c1")),
		"no time":       base64.RawURLEncoding.EncodeToString([]byte("owner-1\x00x\x00c1")),
		"no id":         base64.RawURLEncoding.EncodeToString([]byte("owner-1\x00" + at)),
	} {
		if _, _, err := st.Owned(context.Background(), "owner-1", c, 2); !errors.Is(err, campaign.ErrBadCursor) {
			t.Errorf("Owned, %s: %v, want ErrBadCursor", name, err)
		}
	}
}

// TestCampaignStoreFaults: every conditional write goes through the
// fault injector first, and an injected fault writes nothing.
func TestCampaignStoreFaults(t *testing.T) {
	ctx := context.Background()
	injected := errors.New("injected")
	task := campaign.SendTask{CampaignID: "c", ID: campaign.TaskID("c", 0), State: campaign.Pending, SendAt: t0}
	for _, tc := range []struct {
		op   string
		call func(s *CampaignStore) error
	}{
		{"Claim", func(s *CampaignStore) error { _, err := s.Claim(ctx, task.Key(), t0, t0, time.Minute); return err }},
		{"TakeOver", func(s *CampaignStore) error { _, err := s.TakeOver(ctx, task.Key(), t0, t0, time.Minute); return err }},
		{"Replace", func(s *CampaignStore) error {
			next, _ := campaign.Cancel(task, "r", t0)
			return s.Replace(ctx, task, next)
		}},
		{"SetStatus", func(s *CampaignStore) error {
			return s.SetStatus(ctx, "c", []campaign.Status{campaign.Active}, campaign.CampaignCancelled, "", t0)
		}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			s := NewCampaignStore()
			s.PutCampaign(campaign.Campaign{ID: "c", Status: campaign.Active, Total: 1})
			s.PutTasks(task)
			var ops []string
			s.Fail = func(op string) error {
				ops = append(ops, op)
				return injected
			}
			if err := tc.call(s); !errors.Is(err, injected) || !slices.Equal(ops, []string{tc.op}) {
				t.Fatalf("error = %v after faults %v, want the injected one on %s", err, ops, tc.op)
			}
			if got, _ := s.Get(ctx, task.Key()); s.Writes != 0 || got != task {
				t.Fatalf("%d writes, task %+v: want none", s.Writes, got)
			}
			if c, _ := s.Campaign(ctx, "c"); c.Status != campaign.Active {
				t.Fatalf("campaign %s, want it untouched", c.Status)
			}
		})
	}
}

// TestCampaignStoreOpenTasks: All and CountOpen (the simulation's reads)
// and the open index follow every write, tasks put as they are included.
func TestCampaignStoreOpenTasks(t *testing.T) {
	ctx := context.Background()
	st := NewCampaignStore()
	task := func(i int, s campaign.State) campaign.SendTask {
		return campaign.SendTask{CampaignID: "c", ID: campaign.TaskID("c", i), Index: i, State: s, SendAt: t0}
	}
	open := func() []string {
		var ids []string
		for cur, first := "", true; first || cur != ""; first = false {
			page, next, err := st.Open(ctx, cur, 1)
			if err != nil || (next != "" && next == cur) {
				t.Fatalf("Open(%q) = cursor %q, %v", cur, next, err)
			}
			for _, x := range page {
				ids = append(ids, x.ID)
			}
			cur = next
		}
		return ids
	}
	st.PutTasks(task(2, campaign.Running), task(0, campaign.Pending), task(1, campaign.Cancelled))
	for _, step := range []struct {
		name string
		put  []campaign.SendTask
		want []string
	}{
		{"as put", nil, []string{"c-00000", "c-00002"}},
		{"one ended", []campaign.SendTask{task(0, campaign.Finished)}, []string{"c-00002"}},
		{"one opened again", []campaign.SendTask{task(1, campaign.Pending)}, []string{"c-00001", "c-00002"}},
		{"every one ended", []campaign.SendTask{task(1, campaign.Failed), task(2, campaign.Cancelled)}, nil},
		{"one opened again after all ended", []campaign.SendTask{task(0, campaign.Pending)}, []string{"c-00000"}},
	} {
		st.PutTasks(step.put...)
		if got := open(); !slices.Equal(got, step.want) || st.CountOpen("c") != len(step.want) {
			t.Fatalf("%s: open %v (CountOpen %d), want %v", step.name, got, st.CountOpen("c"), step.want)
		}
		if all := st.All("c"); len(all) != 3 || all[0].Index != 0 || all[2].Index != 2 {
			t.Fatalf("%s: All = %v", step.name, all)
		}
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
					if err != nil || (len(page) == 0 && next != "") {
						b.Fatalf("page of %d, %v", len(page), err)
					}
					if writes {
						b.StopTimer()
						next, _ := campaign.Cancel(open[ended], "r", t0)
						if err := st.Replace(ctx, open[ended], next); err != nil {
							b.Fatal(err)
						}
						if ended++; ended == len(open) { // every task ended: open them again
							st.PutTasks(open...)
							ended = 0
						}
						b.StartTimer()
					}
					cur = next
				}
			}
		})
	}
}

// TestCampaignStoreVersion: every write changes the version (a save
// skips a store whose version it saved), a refused one does not.
func TestCampaignStoreVersion(t *testing.T) {
	ctx := context.Background()
	s := NewCampaignStore()
	c, tasks := campaigntest.CampaignFixture(t, "c1", 2, campaigntest.CampaignT0)
	claimed := func() campaign.SendTask { x, _ := s.Get(ctx, tasks[0].Key()); return x }
	for _, tc := range []struct {
		name    string
		write   func() error
		changes bool
	}{
		{"Create", func() error { return s.Create(ctx, c, tasks) }, true},
		{"a refused Create", func() error { _ = s.Create(ctx, c, tasks); return nil }, false},
		{"SetStatus", func() error {
			return s.SetStatus(ctx, "c1", []campaign.Status{campaign.Draft}, campaign.Active, "", campaigntest.CampaignT0)
		}, true},
		{"Claim", func() error {
			_, err := s.Claim(ctx, tasks[0].Key(), tasks[0].SendAt, tasks[0].SendAt, time.Minute)
			return err
		}, true},
		{"Replace", func() error {
			next, _ := campaign.Cancel(claimed(), "r", campaigntest.CampaignT0)
			return s.Replace(ctx, claimed(), next)
		}, true},
		{"PutCampaign", func() error { s.PutCampaign(c); return nil }, true},
		{"PutTasks", func() error { s.PutTasks(tasks[1]); return nil }, true},
	} {
		before := s.Version()
		if err := tc.write(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if changed := s.Version() != before; changed != tc.changes {
			t.Errorf("%s: version changed %v, want %v", tc.name, changed, tc.changes)
		}
	}
}

// TestCampaignStoreOnWrite: OnWrite hears of every successful Create and
// conditional write, after it, with the campaign and the tasks written;
// of no refused one and no plain put.
func TestCampaignStoreOnWrite(t *testing.T) {
	ctx := context.Background()
	s := NewCampaignStore()
	c, tasks := campaigntest.CampaignFixture(t, "c1", 2, campaigntest.CampaignT0)
	var heard []string
	s.OnWrite = func(_ context.Context, id string, sends []campaign.SendTask) {
		heard = append(heard, id)
		for _, t := range sends {
			got, _ := s.Get(ctx, t.Key()) // the write is done, the lock free
			heard = append(heard, t.ID+"="+string(got.State))
		}
	}
	claimed := func() campaign.SendTask { x, _ := s.Get(ctx, tasks[0].Key()); return x }
	for _, tc := range []struct {
		name  string
		write func() error
		want  []string
	}{
		{"Create", func() error { return s.Create(ctx, c, tasks) }, []string{"c1"}},
		{"a refused Create", func() error { _ = s.Create(ctx, c, tasks); return nil }, nil},
		{"SetStatus", func() error {
			return s.SetStatus(ctx, "c1", []campaign.Status{campaign.Draft}, campaign.Active, "", campaigntest.CampaignT0)
		}, []string{"c1"}},
		{"a refused SetStatus", func() error {
			_ = s.SetStatus(ctx, "c1", []campaign.Status{campaign.Draft}, campaign.Active, "", campaigntest.CampaignT0)
			return nil
		}, nil},
		{"Claim", func() error {
			_, err := s.Claim(ctx, tasks[0].Key(), tasks[0].SendAt, tasks[0].SendAt, time.Minute)
			return err
		}, []string{"c1", tasks[0].ID + "=" + string(campaign.Running)}},
		{"TakeOver", func() error {
			at := tasks[0].SendAt.Add(time.Hour)
			_, err := s.TakeOver(ctx, tasks[0].Key(), tasks[0].SendAt, at, time.Minute)
			return err
		}, []string{"c1", tasks[0].ID + "=" + string(campaign.Running)}},
		{"Replace", func() error {
			next, _ := campaign.Finish(claimed(), campaigntest.CampaignT0, "m1", campaigntest.CampaignT0)
			return s.Replace(ctx, claimed(), next)
		}, []string{"c1", tasks[0].ID + "=" + string(campaign.Finished)}},
		{"a refused Replace", func() error { _ = s.Replace(ctx, tasks[0], tasks[0]); return nil }, nil},
		{"PutCampaign", func() error { s.PutCampaign(c); return nil }, nil},
		{"PutTasks", func() error { s.PutTasks(tasks[1]); return nil }, nil},
	} {
		heard = nil
		if err := tc.write(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(heard, tc.want) {
			t.Errorf("%s: OnWrite heard %q, want %q", tc.name, heard, tc.want)
		}
	}
}
