package contract_test

import (
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
)

func TestValidateReminders(t *testing.T) {
	cases := []struct {
		name string
		edit func(*contract.Schema)
		want string // "" = valid
	}{
		{"default has reminders", func(*contract.Schema) {}, ""},
		{"consumer without", func(s *contract.Schema) { *s = consumer() }, ""},
		{"consumer with", func(s *contract.Schema) { *s = consumer(); s.RemindAttr = "remindAt"; *s = s.WithDefaults() }, ""},
		{"prefix inside the other", func(s *contract.Schema) { s.ReminderNamePrefix = "task-r-" }, "must not start one another"},
		{"bad prefix", func(s *contract.Schema) { s.ReminderNamePrefix = "r/" }, "ReminderNamePrefix \"r/\" must be"},
		{"attribute reused", func(s *contract.Schema) { s.RemindedAttr = "dueAt" }, "DueAttr and RemindedAttr are both"},
		{"parts without RemindAttr", func(s *contract.Schema) { s.RemindAttr = "" }, "need RemindAttr"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := todo()
			c.edit(&s)
			err := s.Validate()
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("Validate = %v, want %q", err, c.want)
			}
		})
	}
	if s := consumer(); s.RemindClaimAtAttr != "" || s.ReminderNamePrefix != "" || s.Reminds() {
		t.Fatalf("WithDefaults gave a schema without RemindAttr reminder parts: %+v", s)
	}
}

func TestReminderFor(t *testing.T) {
	s := todo()
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	rem := due.Add(-time.Hour)
	it := contract.Item{Key: contract.Key{"u1", "01JABC"}, State: "Pending", Due: due, Token: "tok", Remind: rem}
	r, ok := s.ReminderFor(it)
	if !ok || r.Name != "remind-01JABC" || !r.At.Equal(rem) || !r.Payload.Equal(contract.Payload{Key: it.Key, Due: due, Remind: rem}) {
		t.Fatalf("ReminderFor = %+v, %v", r, ok)
	}
	main := s.ScheduleFor(it)
	if r.Name == main.Name || r.ClientToken == main.ClientToken || len(r.ClientToken) != 64 {
		t.Fatalf("reminder %+v shares its name or token with %+v", r, main)
	}
	moved := it
	moved.Remind = rem.Add(-time.Hour)
	if r2, _ := s.ReminderFor(moved); r2.ClientToken == r.ClientToken {
		t.Fatal("a moved reminder kept its ClientToken")
	}
	for name, it := range map[string]contract.Item{
		"no reminder": {Key: it.Key, State: "Pending", Due: due},
		"not armed":   {Key: it.Key, State: "Done", Due: due, Remind: rem},
	} {
		if _, ok := s.ReminderFor(it); ok {
			t.Errorf("%s: ReminderFor ok", name)
		}
	}
	if _, ok := consumer().ReminderFor(contract.Item{Key: it.Key, State: "Queued", Due: due, Remind: rem}); ok {
		t.Error("a schema without reminders gave a reminder schedule")
	}
}

func TestReminderPayload(t *testing.T) {
	s := todo()
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	k := contract.Key{"u1", "01J"}
	// The due time's payload is byte-identical to the one before reminders.
	if got := s.EncodePayload(contract.Payload{Key: k, Due: due}); got != `{"dueAt":"2026-12-01T09:00:00Z","taskId":"01J","userId":"u1"}` {
		t.Fatalf("expiry payload = %s", got)
	}
	p := contract.Payload{Key: k, Due: due, Remind: due.Add(-15 * time.Minute)}
	enc := s.EncodePayload(p)
	if enc != `{"dueAt":"2026-12-01T09:00:00Z","remindAt":"2026-12-01T08:45:00Z","taskId":"01J","userId":"u1"}` {
		t.Fatalf("reminder payload = %s", enc)
	}
	got, err := s.DecodePayload([]byte(enc))
	if err != nil || !got.Equal(p) || !got.IsReminder() {
		t.Fatalf("DecodePayload = %+v, %v", got, err)
	}
	if _, err := s.DecodePayload([]byte(`{"dueAt":"2026-12-01T09:00:00Z","remindAt":"soon","taskId":"01J","userId":"u1"}`)); err == nil {
		t.Fatal("a bad remindAt decoded")
	}
}

func TestReminderClaimRules(t *testing.T) {
	s := todo()
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	rem := due.Add(-time.Hour)
	now := rem.Add(time.Minute)
	lease := time.Minute
	base := contract.Item{Key: contract.Key{"u", "t"}, State: "Pending", Due: due, Remind: rem}
	with := func(f func(*contract.Item)) contract.Item { it := base; f(&it); return it }
	cases := []struct {
		name            string
		it              contract.Item
		open, claimable bool
	}{
		{"pending at both times", base, true, true},
		{"completed", with(func(it *contract.Item) { it.State = "Done" }), false, false},
		{"expired", with(func(it *contract.Item) { it.State = "Expired" }), false, false},
		{"deadline moved", with(func(it *contract.Item) { it.Due = due.Add(time.Hour) }), false, false},
		{"reminder moved", with(func(it *contract.Item) { it.Remind = rem.Add(45 * time.Minute) }), false, false},
		{"reminder removed", with(func(it *contract.Item) { it.Remind = time.Time{} }), false, false},
		{"reminded already", with(func(it *contract.Item) { it.Reminded = rem }), false, false},
		{"reminded for an older time", with(func(it *contract.Item) { it.Reminded = rem.Add(-time.Hour) }), true, true},
		{"claim fresh", with(func(it *contract.Item) { it.RemindClaimAt = now.Add(-30 * time.Second) }), true, false},
		{"claim lapsed", with(func(it *contract.Item) { it.RemindClaimAt = now.Add(-lease) }), true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := s.ReminderOpen(c.it, due, rem); got != c.open {
				t.Errorf("ReminderOpen = %v, want %v", got, c.open)
			}
			if got := s.RemindClaimable(c.it, contract.Canonical(due, rem), now, lease); got != c.claimable {
				t.Errorf("RemindClaimable = %v, want %v", got, c.claimable)
			}
		})
	}
	if !s.RemindMarkable(base, rem) || s.RemindMarkable(with(func(it *contract.Item) { it.Reminded = rem }), rem) {
		t.Error("RemindMarkable disagrees with MarkReminded's condition")
	}
}

func TestReminderExpressions(t *testing.T) {
	s := todo()
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	rem := due.Add(-time.Hour)
	resolve := func(u contract.Update, e string) string {
		for p, n := range u.Names {
			e = strings.ReplaceAll(e, p+" ", n+" ")
			e = strings.ReplaceAll(e, p+")", n+")")
		}
		for p, v := range u.Values {
			e = strings.ReplaceAll(e, p+")", "'"+v+"')")
			e = strings.ReplaceAll(e, p+",", "'"+v+"',")
			e = strings.ReplaceAll(e, p+" ", "'"+v+"' ")
			if strings.HasSuffix(e, p) {
				e = strings.TrimSuffix(e, p) + "'" + v + "'"
			}
		}
		return e
	}
	u := s.RemindClaim(contract.Key{"u1", "01J"}, contract.Canonical(due, rem), rem.Add(2*time.Minute), time.Minute)
	want := "status IN ('Pending') AND dueAt = '2026-12-01T09:00:00Z' AND remindAt = '2026-12-01T08:00:00Z'" +
		" AND (attribute_not_exists(remindedFor) OR remindedFor <> '2026-12-01T08:00:00Z')" +
		" AND (attribute_not_exists(remindClaimAt) OR remindClaimAt <= '2026-12-01T08:01:00Z')"
	if got := resolve(u, u.ConditionExpression); got != want {
		t.Errorf("RemindClaim condition = %s\nwant %s", got, want)
	}
	if got := resolve(u, u.UpdateExpression); got != "SET remindClaimAt = '2026-12-01T08:02:00Z'" {
		t.Errorf("RemindClaim update = %s", got)
	}
	m := s.MarkReminded(contract.Key{"u1", "01J"}, rem)
	if got, want := resolve(m, m.ConditionExpression), "attribute_exists(userId) AND (attribute_not_exists(remindedFor) OR remindedFor <> '2026-12-01T08:00:00Z')"; got != want {
		t.Errorf("MarkReminded condition = %s\nwant %s", got, want)
	}
	if got := resolve(m, m.UpdateExpression); got != "SET remindedFor = '2026-12-01T08:00:00Z'" {
		t.Errorf("MarkReminded update = %s", got)
	}
}
