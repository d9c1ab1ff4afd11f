package campaign

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	"github.com/unschedule/unschedule/internal/core/timer"
)

var now = time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)

// TestTransitions: every (state, move) pair, legal or refused.
func TestTransitions(t *testing.T) {
	moves := map[string]func(SendTask) (SendTask, error){
		"claim":   func(t SendTask) (SendTask, error) { return Claim(t, t.SendAt, now, time.Minute) },
		"finish":  func(t SendTask) (SendTask, error) { return Finish(t, now, "m1", now) },
		"fail":    func(t SendTask) (SendTask, error) { return Fail(t, "bounced", now) },
		"cancel":  func(t SendTask) (SendTask, error) { return Cancel(t, "campaign cancelled", now) },
		"requeue": func(t SendTask) (SendTask, error) { return Requeue(t, now) },
		"release": func(t SendTask) (SendTask, error) { return Release(t, now) },
		"retime":  func(t SendTask) (SendTask, error) { return Retime(t, now, "x", now) },
		"suppress": func(t SendTask) (SendTask, error) {
			return Suppress(t, "the address is on the suppression list (Bounce)", now)
		},
	}
	legal := map[State]map[string]State{
		Pending:    {"claim": Running, "fail": Failed, "cancel": Cancelled, "retime": Pending, "suppress": Suppressed},
		Running:    {"finish": Finished, "fail": Failed, "requeue": Pending, "release": Pending},
		Finished:   {},
		Failed:     {},
		Cancelled:  {},
		Suppressed: {},
	}
	for from, allowed := range legal {
		for name, move := range moves {
			task := SendTask{ID: "t", State: from, Attempt: 1, LeaseUntil: now.Add(-time.Second), SendAt: now.Add(-time.Minute)}
			got, err := move(task)
			want, ok := allowed[name]
			switch {
			case ok && (err != nil || got.State != want):
				t.Errorf("%s from %s: %v, state %s; want %s", name, from, err, got.State, want)
			case !ok && !errors.Is(err, ErrIllegalTransition):
				t.Errorf("%s from %s: %v, want ErrIllegalTransition", name, from, err)
			case !ok && got != task:
				t.Errorf("%s from %s refused but changed the task", name, from)
			}
		}
	}
}

func TestTransitionDetails(t *testing.T) {
	p := SendTask{ID: "t", State: Pending, Attempt: 2, SchedulerRequestToken: "tok", SendAt: now}
	r, _ := Claim(p, now, now, 5*time.Minute)
	if r.Attempt != 3 || !r.ClaimedAt.Equal(now) || !r.LeaseUntil.Equal(now.Add(5*time.Minute)) || r.SchedulerRequestToken != "tok" {
		t.Fatalf("claim: %+v", r)
	}
	if _, err := Requeue(r, now.Add(time.Minute)); !errors.Is(err, ErrIllegalTransition) {
		t.Fatalf("requeue before the lease passed: %v", err)
	}
	if Stale(r, now.Add(time.Minute)) || !Stale(r, now.Add(5*time.Minute)) {
		t.Fatal("Stale wrong about the lease")
	}
	back, err := Requeue(r, now.Add(5*time.Minute))
	if err != nil || back.State != Pending || back.SchedulerRequestToken != "tok" || back.Attempt != 3 {
		t.Fatalf("requeue keeps the token and the attempt count: %+v %v", back, err)
	}
	f, _ := Finish(r, now.Add(time.Second), "m-1", now.Add(2*time.Second))
	if !f.SentAt.Equal(now.Add(time.Second)) || f.MessageID != "m-1" {
		t.Fatalf("finish: %+v", f)
	}
	if _, err := Fail(r, "", now); err == nil {
		t.Fatal("fail without a reason accepted")
	}
	if _, err := Cancel(p, "", now); err == nil {
		t.Fatal("cancel without a reason accepted")
	}
	var te *TransitionError
	if _, err := Finish(p, now, "", now); !errors.As(err, &te) || te.From != Pending || te.To != Finished || err.Error() != "send task t: Pending cannot move to Finished" {
		t.Fatalf("error %v", err)
	}
}

func TestRetimeChangesTheClientToken(t *testing.T) {
	p := SendTask{CampaignID: "c", ID: "t", State: Pending, SchedulerRequestToken: "tok", SendAt: now}
	k := ItemKey(p.Key())
	if got := p.Schedule().ClientToken; got != TaskSchema.ClientToken(k, "tok", now) {
		t.Fatal(got)
	}
	r, err := Retime(p, now.Add(time.Hour), "2026-06-01T12:00:00", now)
	if err != nil || r.SchedulerRequestToken != "tok" || !r.SendAt.Equal(now.Add(time.Hour)) || r.Local != "2026-06-01T12:00:00" {
		t.Fatalf("%+v %v", r, err)
	}
	r2, _ := Retime(r, now.Add(2*time.Hour), "x", now)
	tokens := map[string]bool{p.Schedule().ClientToken: true, r.Schedule().ClientToken: true, r2.Schedule().ClientToken: true}
	if len(tokens) != 3 || r.Schedule().ClientToken != TaskSchema.ClientToken(k, "tok", now.Add(time.Hour)) {
		t.Fatalf("tokens %v: want one per send time, from the stored token", tokens)
	}
}

func TestNewToken(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		tok := NewToken()
		if !re.MatchString(tok) || seen[tok] {
			t.Fatalf("token %q not a fresh UUID v4", tok)
		}
		seen[tok] = true
	}
}

func TestNewTasks(t *testing.T) {
	c := Campaign{ID: "01JCAMPAIGN", Subject: "Default subject", Rules: plan.Rules{TimeZone: "Europe/Berlin"}}
	sends := []plan.Send{{Index: 0, At: now, Local: "2026-06-01T11:00:00"}, {Index: 1, At: now.Add(time.Hour), Local: "2026-06-01T12:00:00"}}
	rs := []Recipient{{Email: "a@example.com", Subject: "Hi A"}, {Email: "b@example.com"}}
	ts, err := NewTasks(c, rs, sends, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if ts[0].ID != "01JCAMPAIGN-00000" || ts[1].Subject != "Default subject" || ts[0].Subject != "Hi A" || ts[1].TimeZone != "Europe/Berlin" ||
		ts[0].State != Pending || ts[0].SchedulerRequestToken == ts[1].SchedulerRequestToken || ts[1].Local != "2026-06-01T12:00:00" {
		t.Fatalf("tasks %+v", ts)
	}
	if n := ScheduleName(Key{CampaignID: strings.Repeat("x", 40), TaskID: TaskID(strings.Repeat("x", 40), 99999)}); len(n) > 64 || !strings.HasPrefix(n, ScheduleNamePrefix) {
		t.Fatal("the longest schedule name exceeds 64")
	}
	if _, err := NewTasks(c, rs[:1], sends, nil, now); err == nil {
		t.Fatal("recipients and sends of different lengths accepted")
	}
	c.ID = "bad id"
	if _, err := NewTasks(c, rs, sends, nil, now); err == nil {
		t.Fatal("bad campaign id accepted")
	}
}

func TestScheduleAndFire(t *testing.T) {
	at := time.Date(2026, 10, 24, 23, 59, 0, 0, time.UTC) // 01:59 in Berlin, the night the clocks go back
	task := SendTask{CampaignID: "c", ID: "c-00001", SendAt: at, Local: "2026-10-25T01:59:00", TimeZone: "Europe/Berlin", SchedulerRequestToken: "tok"}
	k := contract.Key{Partition: "C#c", Sort: "T#c-00001"}
	if ItemKey(task.Key()) != k {
		t.Fatalf("item key %v", ItemKey(task.Key()))
	}
	want := timer.Schedule{Name: TaskSchema.ScheduleName(k), At: at, ClientToken: TaskSchema.ClientToken(k, "tok", at),
		Payload: contract.Payload{Key: k, Due: at}}
	if got := task.Schedule(); got != want || got.Name != ScheduleName(task.Key()) {
		t.Fatalf("schedule\n got %+v\nwant %+v", got, want)
	}
	// Every core timer hands the send function the payload; schedules
	// armed before campaigns ran on the core's timers hand it the older
	// event. One decode reads both.
	for _, tc := range []struct {
		name, in string
		want     FireEvent
	}{
		{"core timer payload", TaskSchema.EncodePayload(want.Payload), FireEvent{CampaignID: "c", TaskID: "c-00001", Due: at}},
		{"older fire event", `{"campaignId":"c","taskId":"c-00001"}`, FireEvent{CampaignID: "c", TaskID: "c-00001"}},
	} {
		e, err := DecodeFire([]byte(tc.in))
		if err != nil || e != tc.want {
			t.Errorf("%s: decode %s: %+v %v", tc.name, tc.in, e, err)
		}
	}
	for _, bad := range []string{`{}`, `{"taskId":"x"}`, `nope`, `{"pk":"USER#1","sk":"T#x","sendAt":"2026-06-01T08:00:00Z"}`,
		`{"pk":"C#c","sk":"T#c-00001"}`} {
		if _, err := DecodeFire([]byte(bad)); err == nil {
			t.Errorf("DecodeFire(%s) accepted", bad)
		}
	}
}
func TestValidID(t *testing.T) {
	for _, c := range []struct {
		id   string
		want bool
	}{
		{"a", true}, {"Camp_1-x", true}, {strings.Repeat("z", 40), true},
		{"", false}, {strings.Repeat("z", 41), false}, {"a b", false}, {"a/b", false}, {"é", false}, {"a.b", false},
	} {
		if got := validID(c.id); got != c.want {
			t.Errorf("validID(%q) = %v, want %v", c.id, got, c.want)
		}
	}
}
