package contract_test

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
)

// todo is the to-do app's schema, spelled out as an adopter with items
// of its own spells its schema (internal/todo/tableschema.Todo is the same).
func todo() contract.Schema {
	return contract.Schema{PartitionKey: "userId", SortKey: "taskId", DueAttr: "dueAt", StateAttr: "status",
		ArmedStates: []string{"Pending"}, FiredState: "Expired", TokenAttr: "scheduleToken", InlineAttr: "scheduleInline",
		FiredAtAttr: "expiredAt", ClaimAtAttr: "notifyClaimAt", DeliveredAtAttr: "notifiedAt", ScheduleNamePrefix: "task-",
		NameBySortKey: true, RemindAttr: "remindAt", RemindClaimAtAttr: "remindClaimAt", RemindedAttr: "remindedFor",
		ReminderNamePrefix: "remind-"}
}

// consumer is a schema an adopter might use: other key names, another due
// attribute and other states.
func consumer() contract.Schema {
	return contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt",
		ArmedStates: []string{"Queued"}, FiredState: "Done", ScheduleNamePrefix: "job-"}.WithDefaults()
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		edit func(*contract.Schema)
		want string // "" = valid
	}{
		{"default", func(*contract.Schema) {}, ""},
		{"consumer", func(s *contract.Schema) { *s = consumer() }, ""},
		{"no sort key", func(s *contract.Schema) { s.SortKey, s.NoSortKey, s.NameBySortKey = "", true, false }, ""},
		{"fired state armed", func(s *contract.Schema) { s.FiredState = "Pending" }, "FiredState \"Pending\" must be"},
		{"duplicate name", func(s *contract.Schema) { s.DueAttr = "status" }, "DueAttr and StateAttr are both"},
		{"key reused", func(s *contract.Schema) { s.SortKey = "userId" }, "PartitionKey and SortKey are both"},
		{"bad name", func(s *contract.Schema) { s.StateAttr = "st ate" }, "not a usable attribute name"},
		{"empty armed state", func(s *contract.Schema) { s.ArmedStates = []string{"Pending", ""} }, "empty state"},
		{"long prefix", func(s *contract.Schema) { s.ScheduleNamePrefix = strings.Repeat("p", 21) }, "ScheduleNamePrefix"},
		{"longest name", func(s *contract.Schema) { s.StateAttr = strings.Repeat("s", 255) }, ""},
		{"long name", func(s *contract.Schema) { s.StateAttr = strings.Repeat("s", 256) }, "not a usable attribute name"},
		{"sort key and none", func(s *contract.Schema) { s.NoSortKey = true }, "SortKey is \"taskId\" but NoSortKey"},
		{"name by missing sort key", func(s *contract.Schema) { s.SortKey, s.NoSortKey = "", true }, "NameBySortKey needs a sort key"},
		{"reserved prefix", func(s *contract.Schema) { s.ReservedSortKeyPrefix = "#" }, ""},
		{"reserved prefix without a sort key", func(s *contract.Schema) {
			s.SortKey, s.NoSortKey, s.NameBySortKey, s.ReservedSortKeyPrefix = "", true, false, "#"
		}, "ReservedSortKeyPrefix \"#\" needs a sort key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := todo()
			c.edit(&s)
			err := s.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Validate = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// Reserved names the adopter's own items by their sort key's prefix, and
// nothing without one; the prefix survives the environment.
func TestReserved(t *testing.T) {
	withPrefix := todo()
	withPrefix.ReservedSortKeyPrefix = "#"
	cases := []struct {
		name   string
		schema contract.Schema
		key    contract.Key
		want   bool
	}{
		{"settings item", withPrefix, contract.Key{Partition: "u", Sort: "#settings"}, true},
		{"task", withPrefix, contract.Key{Partition: "u", Sort: "01JD00000000000000000000AA"}, false},
		{"prefix inside the key", withPrefix, contract.Key{Partition: "#u", Sort: "a#b"}, false},
		{"no prefix", todo(), contract.Key{Partition: "u", Sort: "#settings"}, false},
		{"no sort key", consumer(), contract.Key{Partition: "u"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.schema.Reserved(c.key); got != c.want {
				t.Fatalf("Reserved(%v) = %v, want %v", c.key, got, c.want)
			}
		})
	}
	got, err := contract.Parse(withPrefix.EnvValue())
	if err != nil || got.ReservedSortKeyPrefix != "#" {
		t.Fatalf("Parse(EnvValue) = %+v, %v; want the prefix kept", got, err)
	}
}

func TestScheduleNames(t *testing.T) {
	long := strings.Repeat("x", 70)
	cases := []struct {
		name   string
		schema contract.Schema
		key    contract.Key
		want   string // exact, or "" to check only the shape
	}{
		{"to-do ulid", todo(), contract.Key{"u1", "01JABCDEFGHJKMNPQRSTVWXYZ0"}, "task-01JABCDEFGHJKMNPQRSTVWXYZ0"},
		{"to-do unsafe sort key is hashed", todo(), contract.Key{"u1", "a b"}, ""},
		{"to-do long sort key is hashed", todo(), contract.Key{"u1", long}, ""},
		{"consumer is hashed", consumer(), contract.Key{"t1", "j1"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.schema.ScheduleName(c.key)
			if c.want != "" && got != c.want {
				t.Fatalf("ScheduleName = %q, want %q", got, c.want)
			}
			if len(got) > contract.MaxScheduleName || !strings.HasPrefix(got, c.schema.ScheduleNamePrefix) {
				t.Fatalf("ScheduleName = %q: too long or without its prefix", got)
			}
		})
	}
	s := consumer()
	if s.ScheduleName(contract.Key{"t1", "j1"}) == s.ScheduleName(contract.Key{"t2", "j1"}) {
		t.Fatal("two tenants' jobs with one job id share a schedule name")
	}
}

func TestClientToken(t *testing.T) {
	s := consumer()
	k := contract.Key{"t1", "j1"}
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	a := s.ClientToken(k, "", due)
	cases := []struct {
		name string
		tok  string
		same bool
	}{
		{"same item and due", s.ClientToken(k, "", due.Add(300*time.Millisecond)), true},
		{"other due", s.ClientToken(k, "", due.Add(time.Second)), false},
		{"other key", s.ClientToken(contract.Key{"t2", "j1"}, "", due), false},
		{"writer's token", s.ClientToken(k, "r4nd0m", due), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if (c.tok == a) != c.same || len(c.tok) != 64 {
				t.Fatalf("token %q vs %q: same = %v, want %v (64 hex)", c.tok, a, c.tok == a, c.same)
			}
		})
	}
}

func TestPayloadRoundTrip(t *testing.T) {
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	cases := []struct {
		name   string
		schema contract.Schema
		key    contract.Key
		want   string
	}{
		{"to-do", todo(), contract.Key{"u1", "01J"}, `{"dueAt":"2026-12-01T09:00:00Z","taskId":"01J","userId":"u1"}`},
		{"consumer", consumer(), contract.Key{"t1", "j1"}, `{"jobId":"j1","runAt":"2026-12-01T09:00:00Z","tenantId":"t1"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			enc := c.schema.EncodePayload(contract.Payload{Key: c.key, Due: due})
			if enc != c.want {
				t.Fatalf("EncodePayload = %s, want %s", enc, c.want)
			}
			p, err := c.schema.DecodePayload([]byte(enc))
			if err != nil || p.Key != c.key || !p.Due.Equal(due) {
				t.Fatalf("DecodePayload = %+v, %v", p, err)
			}
		})
	}
	if _, err := consumer().DecodePayload([]byte(`{"tenantId":"t1","runAt":"2026-12-01T09:00:00Z"}`)); err == nil {
		t.Fatal("a payload without its sort key decoded")
	}
}

func TestClaimRules(t *testing.T) {
	s := consumer()
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now := due.Add(time.Minute)
	lease := time.Minute
	item := func(state string, d time.Time, delivered bool, claim time.Time) contract.Item {
		return contract.Item{Key: contract.Key{"t", "j"}, State: state, Due: d, Delivered: delivered, ClaimAt: claim}
	}
	cases := []struct {
		name                         string
		it                           contract.Item
		claimable, undelivered, take bool
	}{
		{"armed at due", item("Queued", due, false, time.Time{}), true, false, false},
		{"armed, due moved", item("Queued", due.Add(time.Hour), false, time.Time{}), false, false, false},
		{"cancelled", item("Cancelled", due, false, time.Time{}), false, false, false},
		{"fired, claim fresh", item("Done", due, false, now.Add(-30*time.Second)), false, true, false},
		{"fired, claim lapsed", item("Done", due, false, now.Add(-lease)), false, true, true},
		{"fired, claimed at the due second", item("Done", due, false, due), false, true, true},
		// A writer's move into the fired state: no claim mark for this
		// due time, so nothing may run the target.
		{"in the fired state, never claimed", item("Done", due, false, time.Time{}), false, false, false},
		{"in the fired state, claimed for an earlier due", item("Done", due, false, due.Add(-time.Second)), false, false, false},
		{"fired and delivered", item("Done", due, true, now.Add(-lease)), false, false, false},
		{"fired for another due", item("Done", due.Add(-time.Hour), false, now.Add(-lease)), false, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := s.Claimable(c.it, contract.FormatTime(due)); got != c.claimable {
				t.Errorf("Claimable = %v, want %v", got, c.claimable)
			}
			if got := s.Undelivered(c.it, due); got != c.undelivered {
				t.Errorf("Undelivered = %v, want %v", got, c.undelivered)
			}
			if got := s.TakeOverable(c.it, contract.FormatTime(due), now, lease); got != c.take {
				t.Errorf("TakeOverable = %v, want %v", got, c.take)
			}
		})
	}
}

// IsClaim tells the library's claim (a new claim mark for the due time)
// from a writer's move into the fired state, which cancels.
func TestIsClaim(t *testing.T) {
	s := consumer()
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	item := func(state string, claim time.Time) contract.Item {
		return contract.Item{Key: contract.Key{"t", "j"}, State: state, Due: due, ClaimAt: claim}
	}
	for _, c := range []struct {
		name          string
		before, after contract.Item
		want          bool
	}{
		{"the claim", item("Queued", time.Time{}), item("Done", due.Add(time.Second)), true},
		{"the claim at the due second", item("Queued", time.Time{}), item("Done", due), true},
		{"the claim over an earlier firing's mark", item("Queued", due.Add(-time.Hour)), item("Done", due), true},
		{"a writer, no mark", item("Queued", time.Time{}), item("Done", time.Time{}), false},
		{"a writer, an earlier firing's mark kept", item("Queued", due.Add(-time.Hour)), item("Done", due.Add(-time.Hour)), false},
		{"a writer, the mark unchanged", item("Queued", due), item("Done", due), false},
		{"not the fired state", item("Queued", time.Time{}), item("Cancelled", due), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := s.IsClaim(c.before, c.after); got != c.want {
				t.Fatalf("IsClaim = %v, want %v", got, c.want)
			}
		})
	}
}

func TestClaimExpression(t *testing.T) {
	s := todo()
	s.ArmedStates = []string{"Pending", "Snoozed"}
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	u := s.Claim(contract.Key{"u1", "01J"}, contract.FormatTime(due), due.Add(time.Second), contract.ClaimOptions{
		AlsoSet: map[string]string{"updatedAt": "x"}, AlsoRemove: []string{"pendingTaskId"}})
	resolve := func(e string) string {
		for p, n := range u.Names {
			e = strings.ReplaceAll(e, p, n)
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
	if got, want := resolve(u.ConditionExpression), "status IN ('Pending', 'Snoozed') AND dueAt = '2026-12-01T09:00:00Z'"; got != want {
		t.Errorf("condition = %s, want %s", got, want)
	}
	if got, want := resolve(u.UpdateExpression), "SET status = 'Expired', expiredAt = '2026-12-01T09:00:01Z', notifyClaimAt = '2026-12-01T09:00:01Z', updatedAt = 'x' REMOVE pendingTaskId"; got != want {
		t.Errorf("update = %s, want %s", got, want)
	}
	if u.Key["userId"] != "u1" || u.Key["taskId"] != "01J" || len(u.Key) != 2 {
		t.Errorf("key = %v", u.Key)
	}
}

func TestEnvRoundTrip(t *testing.T) {
	for _, s := range []contract.Schema{todo(), consumer()} {
		got, err := contract.Parse(s.EnvValue())
		if err != nil || got.EnvValue() != s.EnvValue() {
			t.Fatalf("Parse(EnvValue) = %+v, %v; want %+v", got, err, s)
		}
	}
	if _, err := contract.Parse(`{"firedState":"Pending"}`); err == nil {
		t.Fatal("an invalid schema parsed")
	}
	if got, err := contract.Parse(""); err != nil || got.EnvValue() != contract.Default().EnvValue() {
		t.Fatalf("Parse(\"\") = %+v, %v; want Default", got, err)
	}
}

// Every writer's spelling reads as the same instant at whole seconds, and
// an item keeps the stored spelling for its conditional writes.
func TestWriterSpellings(t *testing.T) {
	at := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	s := consumer()
	for i, v := range contract.WriterSpellings(at) {
		t.Run(v, func(t *testing.T) {
			got, err := contract.ParseTime(v)
			if err != nil || !got.Equal(at) || got.Location() != time.UTC {
				t.Fatalf("ParseTime = %v, %v; want %v UTC", got, err, at)
			}
			it, err := s.ItemFrom(map[string]string{"tenantId": "t", "jobId": "j", "status": "Queued", "runAt": v})
			if err != nil || !s.Armed(it) || !it.Due.Equal(at) || it.Spelling().Due != v || (it.DueText == "") != (i == 0) {
				t.Fatalf("ItemFrom = %+v, %v; want armed at %v, spelled %q", it, err, at, v)
			}
			if !s.Claimable(it, v) || (i > 0 && s.Claimable(it, contract.FormatTime(at))) {
				t.Fatalf("Claimable compares other than the stored string")
			}
			if sc := s.ScheduleFor(it); !sc.At.Equal(at) || sc.ClientToken != s.ClientToken(it.Key, "", at) {
				t.Fatalf("ScheduleFor = %+v; want at %v with the spelling-free token", sc, at)
			}
		})
	}
	for _, v := range []string{"2026-12-01 08:00:00Z", "2026-12-01T08:00Z", "2026-12-01T23:59:60Z", "tomorrow"} {
		if got, err := contract.ParseTime(v); err == nil {
			t.Errorf("ParseTime(%q) = %v, want an error", v, got)
		}
	}
}

// Default names no app's items: each field's neutral value, exactly.
func TestDefaultIsNeutral(t *testing.T) {
	d := contract.Default()
	for _, c := range []struct{ field, got, want string }{
		{"PartitionKey", d.PartitionKey, "pk"},
		{"SortKey", d.SortKey, "sk"},
		{"NoSortKey", strconv.FormatBool(d.NoSortKey), "false"},
		{"DueAttr", d.DueAttr, "dueAt"},
		{"StateAttr", d.StateAttr, "status"},
		{"ArmedStates", strings.Join(d.ArmedStates, ","), "Pending"},
		{"FiredState", d.FiredState, "Fired"},
		{"TokenAttr", d.TokenAttr, "scheduleToken"},
		{"InlineAttr", d.InlineAttr, "scheduleInline"},
		{"FiredAtAttr", d.FiredAtAttr, "firedAt"},
		{"ClaimAtAttr", d.ClaimAtAttr, "claimAt"},
		{"DeliveredAtAttr", d.DeliveredAtAttr, "deliveredAt"},
		{"ScheduleNamePrefix", d.ScheduleNamePrefix, "item-"},
		{"NameBySortKey", strconv.FormatBool(d.NameBySortKey), "false"},
		{"RemindAttr", d.RemindAttr, ""},
		{"RemindClaimAtAttr", d.RemindClaimAtAttr, ""},
		{"RemindedAttr", d.RemindedAttr, ""},
		{"ReminderNamePrefix", d.ReminderNamePrefix, ""},
	} {
		if c.got != c.want {
			t.Errorf("Default().%s = %q, want %q", c.field, c.got, c.want)
		}
	}
	if err := d.Validate(); err != nil {
		t.Fatalf("Default() does not validate: %v", err)
	}
	if d.Reminds() {
		t.Fatal("Default() has reminders")
	}
	if !reflect.DeepEqual(contract.Schema{}.WithDefaults(), d) {
		t.Fatalf("Schema{}.WithDefaults() = %+v, want Default()", contract.Schema{}.WithDefaults())
	}
}

// WithDefaults fills a partial schema with the neutral names, never the
// to-do app's.
func TestWithDefaultsFillsNeutralNames(t *testing.T) {
	todoNames := map[string]bool{"userId": true, "taskId": true, "Expired": true, "expiredAt": true,
		"notifyClaimAt": true, "notifiedAt": true, "task-": true}
	for _, c := range []struct {
		name    string
		partial contract.Schema
		want    contract.Schema
	}{
		{"keys and states given", contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", ArmedStates: []string{"Queued"}, FiredState: "Done"},
			contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "dueAt", StateAttr: "status",
				ArmedStates: []string{"Queued"}, FiredState: "Done", TokenAttr: "scheduleToken", InlineAttr: "scheduleInline",
				FiredAtAttr: "firedAt", ClaimAtAttr: "claimAt", DeliveredAtAttr: "deliveredAt", ScheduleNamePrefix: "item-"}},
		{"no sort key", contract.Schema{PartitionKey: "id", NoSortKey: true, DueAttr: "runAt"},
			contract.Schema{PartitionKey: "id", NoSortKey: true, DueAttr: "runAt", StateAttr: "status",
				ArmedStates: []string{"Pending"}, FiredState: "Fired", TokenAttr: "scheduleToken", InlineAttr: "scheduleInline",
				FiredAtAttr: "firedAt", ClaimAtAttr: "claimAt", DeliveredAtAttr: "deliveredAt", ScheduleNamePrefix: "item-"}},
		{"reminders asked for", contract.Schema{RemindAttr: "remindAt"},
			contract.Schema{PartitionKey: "pk", SortKey: "sk", DueAttr: "dueAt", StateAttr: "status",
				ArmedStates: []string{"Pending"}, FiredState: "Fired", TokenAttr: "scheduleToken", InlineAttr: "scheduleInline",
				FiredAtAttr: "firedAt", ClaimAtAttr: "claimAt", DeliveredAtAttr: "deliveredAt", ScheduleNamePrefix: "item-",
				RemindAttr: "remindAt", RemindClaimAtAttr: "remindClaimAt", RemindedAttr: "remindedFor", ReminderNamePrefix: "remind-"}},
		{"a full schema is kept", todo(), todo()},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.partial.WithDefaults()
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("WithDefaults:\n got %+v\nwant %+v", got, c.want)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if reflect.DeepEqual(c.partial, todo()) {
				return
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(got.EnvValue()), &m); err != nil {
				t.Fatal(err)
			}
			for k, v := range m {
				if s, ok := v.(string); ok && todoNames[s] {
					t.Errorf("WithDefaults filled %s with the to-do app's %q", k, s)
				}
			}
		})
	}
}
