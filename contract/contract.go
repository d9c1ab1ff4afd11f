package contract

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Schema names the attributes and states of a schedule-on-write item.
// The zero value of a field means its default (see Default), except
// SortKey, which is "" for a table keyed by its partition key alone only
// when NoSortKey is set.
//
// The defaults are the core's own, neutral names, named after no app: an
// adopter that writes new items can take them as they are. An adopter
// whose items already exist (the to-do app in this repository among
// them) sets every name its items use.
type Schema struct {
	// PartitionKey is the table's partition key attribute (type S).
	// Default: "pk".
	PartitionKey string `json:"partitionKey"`
	// SortKey is the table's sort key attribute (type S).
	// Default: "sk"; "" with NoSortKey for a table without one.
	SortKey string `json:"sortKey,omitempty"`
	// NoSortKey says the table has no sort key.
	// Default: false.
	NoSortKey bool `json:"noSortKey,omitempty"`
	// DueAttr holds the due time, RFC 3339 (S).
	// Default: "dueAt".
	DueAttr string `json:"dueAttr"`
	// StateAttr holds the item's state (S).
	// Default: "status".
	StateAttr string `json:"stateAttr"`
	// ArmedStates are the states that keep a schedule alive: an item in
	// one of them has a schedule at its due time; leaving them cancels it.
	// Default: ["Pending"].
	ArmedStates []string `json:"armedStates"`
	// FiredState is the state the firing's claim writes: the due time came
	// while the item was armed, and an attempt took the right to run the
	// target. It is written before the target runs, so it alone does not
	// say the target ran: DeliveredAtAttr does. It must not be an armed
	// state.
	// Default: "Fired".
	FiredState string `json:"firedState"`
	// TokenAttr holds an optional random token chosen by the writer; every
	// ClientToken of the item's schedule derives from it (ClientToken).
	// An item without one uses its key instead.
	// Default: "scheduleToken" (the core's own attribute).
	TokenAttr string `json:"tokenAttr"`
	// InlineAttr, set to "true" on an insert, says that the writer created
	// the item's schedule itself (the low-latency path, as the to-do API
	// does), so the stream path must not create it again.
	// Default: "scheduleInline" (the core's own attribute).
	InlineAttr string `json:"inlineAttr"`
	// FiredAtAttr records when the claim fired the item: written by the
	// claim, with FiredState, before the target runs.
	// Default: "firedAt".
	FiredAtAttr string `json:"firedAtAttr"`
	// ClaimAtAttr records when an attempt last took the right to run the
	// target (the claim, or a take-over after the lease).
	// Default: "claimAt".
	ClaimAtAttr string `json:"claimAtAttr"`
	// DeliveredAtAttr records that the target ran and returned success
	// (MarkDelivered, after the target); a retried firing runs the target
	// only while it is absent.
	// Default: "deliveredAt".
	DeliveredAtAttr string `json:"deliveredAtAttr"`
	// ScheduleNamePrefix starts every schedule name (ScheduleName).
	// Default: "item-".
	ScheduleNamePrefix string `json:"scheduleNamePrefix"`
	// NameBySortKey names a schedule after the sort key alone, which must
	// then be unique in the whole table (the to-do app's ULIDs are);
	// otherwise the name is a hash of the whole key.
	// Default: false (a hash of the key). WithDefaults leaves it as given.
	NameBySortKey bool `json:"nameBySortKey,omitempty"`
	// RemindAttr holds an optional reminder time, RFC 3339 (S): an armed
	// item with one in the future has a second one-off schedule
	// (ReminderFor) that fires at it, named with ReminderNamePrefix, and
	// moved and cancelled by the same pipeline as the due-time schedule.
	// Its firing changes no state: RemindClaim claims it only while the
	// item is armed with the same due time and reminder time.
	// Default: "" (no reminders). WithDefaults leaves it as given.
	RemindAttr string `json:"remindAttr,omitempty"`
	// RemindClaimAtAttr records when an attempt last took the right to
	// deliver a reminder (RemindClaim).
	// Default: "remindClaimAt" when RemindAttr is set, else "".
	RemindClaimAtAttr string `json:"remindClaimAtAttr,omitempty"`
	// RemindedAttr records the reminder time whose reminder was delivered
	// (MarkReminded): a retried firing for that time delivers nothing.
	// Default: "remindedFor" when RemindAttr is set, else "".
	RemindedAttr string `json:"remindedAttr,omitempty"`
	// ReminderNamePrefix starts every reminder schedule's name
	// (ReminderName). Neither it nor ScheduleNamePrefix may start the
	// other, so a listing by one prefix never holds the other's.
	// Default: "remind-" when RemindAttr is set, else "".
	ReminderNamePrefix string `json:"reminderNamePrefix,omitempty"`
	// ReservedSortKeyPrefix starts the sort key of every item of the
	// table that is the adopter's own and not a scheduled item (the to-do
	// app's settings items, "#settings", under "#"): the stream processor
	// skips their records before decoding them (Reserved), so even a
	// keys-only record of one (a REMOVE without its old image) sends
	// nothing. Choose a prefix no scheduled item's sort key starts with.
	// Needs a sort key.
	// Default: "" (every item may be a scheduled one).
	ReservedSortKeyPrefix string `json:"reservedSortKeyPrefix,omitempty"`
}

// The values of Default, as constants for code that needs them at compile
// time. The reminder ones are what WithDefaults fills in once RemindAttr
// is set; Default itself has no reminders.
const (
	DefaultPartitionKey       = "pk"
	DefaultSortKey            = "sk"
	DefaultDueAttr            = "dueAt"
	DefaultStateAttr          = "status"
	DefaultArmedState         = "Pending"
	DefaultFiredState         = "Fired"
	DefaultTokenAttr          = "scheduleToken"
	DefaultInlineAttr         = "scheduleInline"
	DefaultFiredAtAttr        = "firedAt"
	DefaultClaimAtAttr        = "claimAt"
	DefaultDeliveredAtAttr    = "deliveredAt"
	DefaultScheduleNamePrefix = "item-"
	DefaultRemindClaimAtAttr  = "remindClaimAt"
	DefaultRemindedAttr       = "remindedFor"
	DefaultReminderNamePrefix = "remind-"
)

// Default is the neutral schema: key pk/sk, due time dueAt, state status
// with Pending armed and Fired as the fired state, schedules named item-
// and a hash of the key, and no reminders. It names no app's items: an
// adopter with existing items passes its own schema.
func Default() Schema {
	return Schema{
		PartitionKey: DefaultPartitionKey, SortKey: DefaultSortKey, DueAttr: DefaultDueAttr,
		StateAttr: DefaultStateAttr, ArmedStates: []string{DefaultArmedState}, FiredState: DefaultFiredState,
		TokenAttr: DefaultTokenAttr, InlineAttr: DefaultInlineAttr, FiredAtAttr: DefaultFiredAtAttr,
		ClaimAtAttr: DefaultClaimAtAttr, DeliveredAtAttr: DefaultDeliveredAtAttr,
		ScheduleNamePrefix: DefaultScheduleNamePrefix,
	}
}

// WithDefaults fills every unset field from Default (SortKey only when
// NoSortKey is false), and, when RemindAttr is set, the reminder fields
// from their defaults. It is what every function and construct works
// with, so a partial Schema means "the rest with the neutral names".
func (s Schema) WithDefaults() Schema {
	d := Default()
	fill := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	fill(&s.PartitionKey, d.PartitionKey)
	if !s.NoSortKey {
		fill(&s.SortKey, d.SortKey)
	}
	fill(&s.DueAttr, d.DueAttr)
	fill(&s.StateAttr, d.StateAttr)
	if len(s.ArmedStates) == 0 {
		s.ArmedStates = slices.Clone(d.ArmedStates)
	}
	fill(&s.FiredState, d.FiredState)
	fill(&s.TokenAttr, d.TokenAttr)
	fill(&s.InlineAttr, d.InlineAttr)
	fill(&s.FiredAtAttr, d.FiredAtAttr)
	fill(&s.ClaimAtAttr, d.ClaimAtAttr)
	fill(&s.DeliveredAtAttr, d.DeliveredAtAttr)
	fill(&s.ScheduleNamePrefix, d.ScheduleNamePrefix)
	if s.RemindAttr != "" {
		fill(&s.RemindClaimAtAttr, DefaultRemindClaimAtAttr)
		fill(&s.RemindedAttr, DefaultRemindedAttr)
		fill(&s.ReminderNamePrefix, DefaultReminderNamePrefix)
	}
	return s
}

var (
	attrNameRE = safeName{max: 255} // not `[...]{1,255}`: compiling that regexp costs ~3,600 allocations at every cold start (docs/PERFORMANCE.md)
	prefixRE   = safeName{max: 20}
)

// Validate checks a schema (after WithDefaults). Its messages say what to
// set.
func (s Schema) Validate() error {
	var errs []error
	names := map[string]string{}
	check := func(field, v string) {
		if !attrNameRE.MatchString(v) {
			errs = append(errs, fmt.Errorf("%s %q is not a usable attribute name: use 1-255 letters, digits, '_', '-' or '.'", field, v))
			return
		}
		if other, ok := names[v]; ok {
			errs = append(errs, fmt.Errorf("%s and %s are both %q: every attribute of the contract needs its own name", other, field, v))
			return
		}
		names[v] = field
	}
	check("PartitionKey", s.PartitionKey)
	if s.NoSortKey {
		if s.SortKey != "" {
			errs = append(errs, fmt.Errorf("SortKey is %q but NoSortKey is set: set one or the other", s.SortKey))
		}
		if s.NameBySortKey {
			errs = append(errs, errors.New("NameBySortKey needs a sort key: unset it, or set SortKey"))
		}
		if s.ReservedSortKeyPrefix != "" {
			errs = append(errs, fmt.Errorf("ReservedSortKeyPrefix %q needs a sort key: unset it, or set SortKey", s.ReservedSortKeyPrefix))
		}
	} else {
		check("SortKey", s.SortKey)
	}
	for _, f := range []struct{ field, v string }{
		{"DueAttr", s.DueAttr}, {"StateAttr", s.StateAttr}, {"TokenAttr", s.TokenAttr},
		{"InlineAttr", s.InlineAttr}, {"FiredAtAttr", s.FiredAtAttr}, {"ClaimAtAttr", s.ClaimAtAttr},
		{"DeliveredAtAttr", s.DeliveredAtAttr},
	} {
		check(f.field, f.v)
	}
	if s.RemindAttr != "" {
		for _, f := range []struct{ field, v string }{
			{"RemindAttr", s.RemindAttr}, {"RemindClaimAtAttr", s.RemindClaimAtAttr}, {"RemindedAttr", s.RemindedAttr},
		} {
			check(f.field, f.v)
		}
		if !prefixRE.MatchString(s.ReminderNamePrefix) {
			errs = append(errs, fmt.Errorf("ReminderNamePrefix %q must be 1-20 letters, digits, '_', '-' or '.' (a schedule name allows 64)", s.ReminderNamePrefix))
		} else if strings.HasPrefix(s.ReminderNamePrefix, s.ScheduleNamePrefix) || strings.HasPrefix(s.ScheduleNamePrefix, s.ReminderNamePrefix) {
			errs = append(errs, fmt.Errorf("ReminderNamePrefix %q and ScheduleNamePrefix %q must not start one another: a listing of one prefix would hold the other's schedules", s.ReminderNamePrefix, s.ScheduleNamePrefix))
		}
	} else if s.RemindClaimAtAttr != "" || s.RemindedAttr != "" || s.ReminderNamePrefix != "" {
		errs = append(errs, errors.New("RemindClaimAtAttr, RemindedAttr and ReminderNamePrefix need RemindAttr: set it, or unset them"))
	}
	if len(s.ArmedStates) == 0 || len(s.ArmedStates) > 50 {
		errs = append(errs, fmt.Errorf("ArmedStates needs 1 to 50 states (given %d)", len(s.ArmedStates)))
	}
	for _, a := range s.ArmedStates {
		if a == "" {
			errs = append(errs, errors.New("ArmedStates holds an empty state: remove it"))
		}
	}
	if s.FiredState == "" || slices.Contains(s.ArmedStates, s.FiredState) {
		errs = append(errs, fmt.Errorf("FiredState %q must be a non-empty state outside ArmedStates %q: the claim leaves the armed set", s.FiredState, s.ArmedStates))
	}
	if !prefixRE.MatchString(s.ScheduleNamePrefix) {
		errs = append(errs, fmt.Errorf("ScheduleNamePrefix %q must be 1-20 letters, digits, '_', '-' or '.' (a schedule name allows 64)", s.ScheduleNamePrefix))
	}
	return errors.Join(errs...)
}

// Key is an item's primary key. Sort is "" for a table without a sort key.
type Key struct {
	Partition string
	Sort      string
}

func (k Key) String() string {
	if k.Sort == "" {
		return k.Partition
	}
	return k.Partition + "/" + k.Sort
}

// Reserved reports whether k is the key of one of the adopter's own items
// that is not a scheduled item: its sort key starts with
// ReservedSortKeyPrefix. Always false without one.
func (s Schema) Reserved(k Key) bool {
	return s.ReservedSortKeyPrefix != "" && strings.HasPrefix(k.Sort, s.ReservedSortKeyPrefix)
}

// Attrs renders the key as attribute values, named by the schema.
func (s Schema) Attrs(k Key) map[string]string {
	m := map[string]string{s.PartitionKey: k.Partition}
	if !s.NoSortKey {
		m[s.SortKey] = k.Sort
	}
	return m
}

// Item is what the contract reads from an item: its key, state, due time,
// token and inline mark. Other attributes are the adopter's own.
type Item struct {
	Key   Key
	State string
	// Due is the due time (zero when the item has none or it is not a
	// valid time: such an item is never armed), at whole seconds
	// (ParseTime).
	Due time.Time
	// DueText is the due attribute as stored when that is not
	// FormatTime(Due): another writer's spelling, such as
	// "2026-12-01T09:00:00+01:00" (Spelling).
	DueText string
	Token   string
	Inline  bool
	// Delivered: the target ran for this item's firing.
	Delivered bool
	// ClaimAt is when the right to run the target was last taken.
	ClaimAt time.Time
	// Remind is the reminder time (zero: none, or a schema without
	// RemindAttr).
	Remind time.Time
	// RemindText is the reminder attribute as stored when that is not
	// FormatTime(Remind), as DueText.
	RemindText string
	// RemindClaimAt is when the right to deliver a reminder was last taken.
	RemindClaimAt time.Time
	// Reminded is the reminder time whose reminder was delivered.
	Reminded time.Time
}

// ErrNoKey is wrapped by ItemFrom for attributes without the key.
var ErrNoKey = errors.New("item lacks its key")

// ItemFrom reads an item from its string attributes (an image of the
// stream, or a GetItem result, with every S value as a string). It fails
// only when the key is missing; a bad or missing due time gives a zero
// Due.
func (s Schema) ItemFrom(attrs map[string]string) (Item, error) {
	it := Item{Key: Key{Partition: attrs[s.PartitionKey]}}
	if !s.NoSortKey {
		it.Key.Sort = attrs[s.SortKey]
	}
	if it.Key.Partition == "" || (!s.NoSortKey && it.Key.Sort == "") {
		return Item{}, fmt.Errorf("%w: needs %s", ErrNoKey, strings.Join(s.keyNames(), " and "))
	}
	it.State = attrs[s.StateAttr]
	it.Due, it.DueText = parseStored(attrs[s.DueAttr])
	it.Token = attrs[s.TokenAttr]
	it.Inline = attrs[s.InlineAttr] == "true"
	it.Delivered = attrs[s.DeliveredAtAttr] != ""
	it.ClaimAt, _ = ParseTime(attrs[s.ClaimAtAttr])
	if s.Reminds() {
		it.Remind, it.RemindText = parseStored(attrs[s.RemindAttr])
		it.RemindClaimAt, _ = ParseTime(attrs[s.RemindClaimAtAttr])
		it.Reminded, _ = ParseTime(attrs[s.RemindedAttr])
	}
	return it, nil
}

// parseStored reads a writer's time attribute: the instant, and the
// value itself when it is not the instant's canonical spelling.
func parseStored(v string) (t time.Time, text string) {
	t, _ = ParseTime(v)
	if v != FormatTime(t) {
		text = v
	}
	return t, text
}

// Spelling is how an item stores its due time and reminder time: the
// strings its conditional writes compare. DynamoDB compares S values byte
// by byte, so "2026-12-01T09:00:00+01:00" does not equal
// "2026-12-01T08:00:00Z" although they name one instant
// ("String value comparisons ... are based on ASCII character code
// values": https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Condition.html).
type Spelling struct {
	Due    string
	Remind string
}

// Canonical is the spelling the library writes: FormatTime of each.
func Canonical(due, remind time.Time) Spelling {
	return Spelling{Due: FormatTime(due), Remind: FormatTime(remind)}
}

// Spelling is the item's due time and reminder time as stored.
func (it Item) Spelling() Spelling {
	sp := Canonical(it.Due, it.Remind)
	if it.DueText != "" {
		sp.Due = it.DueText
	}
	if it.RemindText != "" {
		sp.Remind = it.RemindText
	}
	return sp
}

// WriterSpellings are RFC 3339 spellings of t (at whole seconds) that
// other writers produce, each of which ParseTime reads as t: FormatTime(t)
// first, then other offsets ("+00:00" from Python's isoformat(), "-00:00",
// "+01:00", "-05:00", "+05:30"), fractions (".000Z" from JavaScript's
// toISOString(), ".000000+00:00", and ".123456Z" of the instant just
// before t, which rounds up to it) and lower case. For tests of stores and
// writers.
func WriterSpellings(t time.Time) []string {
	t = t.UTC().Truncate(time.Second)
	zone := func(name string, sec int) string {
		return t.In(time.FixedZone(name, sec)).Format("2006-01-02T15:04:05-07:00")
	}
	return []string{
		FormatTime(t),
		t.Format("2006-01-02T15:04:05") + "+00:00",
		t.Format("2006-01-02T15:04:05") + "-00:00",
		zone("CET", 3600),
		zone("EST", -5*3600),
		zone("IST", 5*3600+1800),
		t.Format("2006-01-02T15:04:05.000Z"),
		t.Format("2006-01-02T15:04:05.000000") + "+00:00",
		t.Add(-time.Second + 123456*time.Microsecond).Format("2006-01-02T15:04:05.000000Z"),
		strings.ToLower(FormatTime(t)),
	}
}

// MaxRespellings bounds AsStored's writes: a writer that re-spells the
// same instant again and again between the read and the write wins.
const MaxRespellings = 3

// AsStored runs write, a conditional write whose condition compares the
// item's due time (and, when remind is not zero, its reminder time) as
// stored, first with the canonical spelling of due and remind. When its condition fails (failed) and the
// item, read again (read), holds the same instants in another spelling,
// it writes again with the stored spelling, at most MaxRespellings writes
// in all. So an item that another writer spelled
// "2026-12-01T09:00:00+01:00" or "2026-12-01T08:00:00.000Z" is claimed at
// its instant: the condition stays an exact string comparison on the
// stored value, and costs one read and one write more only for such an
// item. It returns the last write's error, or read's.
func AsStored(due, remind time.Time, write func(Spelling) error, failed func(error) bool,
	read func() (Item, bool, error)) error {
	sp := Canonical(due, remind)
	var err error
	for range MaxRespellings {
		if err = write(sp); err == nil || !failed(err) {
			return err
		}
		it, found, rerr := read()
		if rerr != nil {
			return fmt.Errorf("read after a failed condition: %w", rerr)
		}
		stored := it.Spelling()
		if remind.IsZero() { // a due-time write: the reminder is not compared
			stored.Remind = ""
		}
		if !found || stored == sp || !it.Due.Equal(due.UTC().Truncate(time.Second)) ||
			(!remind.IsZero() && !it.Remind.Equal(remind.UTC().Truncate(time.Second))) {
			return err
		}
		sp = stored
	}
	return err
}

func (s Schema) keyNames() []string {
	if s.NoSortKey {
		return []string{s.PartitionKey}
	}
	return []string{s.PartitionKey, s.SortKey}
}

// Armed reports whether the item must have a schedule: its state is armed
// and it has a due time.
func (s Schema) Armed(it Item) bool {
	return slices.Contains(s.ArmedStates, it.State) && !it.Due.IsZero()
}

// Schedule is the one-off schedule an armed item must have.
type Schedule struct {
	Name        string
	At          time.Time
	ClientToken string
	// Payload is the schedule's input, as JSON (EncodePayload).
	Payload Payload
}

// ScheduleFor is the schedule of an armed item.
func (s Schema) ScheduleFor(it Item) Schedule {
	due := it.Due.UTC().Truncate(time.Second)
	return Schedule{
		Name:        s.ScheduleName(it.Key),
		At:          due,
		ClientToken: s.ClientToken(it.Key, it.Token, due),
		Payload:     Payload{Key: it.Key, Due: due},
	}
}

// nameSafeRE is compiled on first use, not at package init, which every
// Lambda function linking the contract would pay in its cold init.
var nameSafeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]+$`) })

// safeName matches 1 to max characters of nameSafeRE.
type safeName struct{ max int }

// MatchString reports whether v is 1 to max letters, digits, '_', '-' or '.'.
func (n safeName) MatchString(v string) bool {
	return len(v) >= 1 && len(v) <= n.max && nameSafeRE().MatchString(v)
}

// MaxScheduleName is the longest schedule name the scheduler accepts.
const MaxScheduleName = 64

// ScheduleName is the name of an item's schedule: one item, one schedule.
// With NameBySortKey it is the prefix and the sort key, when that fits a
// schedule name; otherwise the prefix and 40 hex digits of the SHA-256 of
// the whole key.
func (s Schema) ScheduleName(k Key) string { return s.name(s.ScheduleNamePrefix, k) }

// ReminderName is the name of an item's reminder schedule: ScheduleName
// with ReminderNamePrefix.
func (s Schema) ReminderName(k Key) string { return s.name(s.ReminderNamePrefix, k) }

func (s Schema) name(prefix string, k Key) string {
	if s.NameBySortKey && nameSafeRE().MatchString(k.Sort) && len(prefix)+len(k.Sort) <= MaxScheduleName {
		return prefix + k.Sort
	}
	sum := sha256.Sum256([]byte(k.Partition + "\x00" + k.Sort))
	return prefix + hex.EncodeToString(sum[:])[:40]
}

// Reminds reports whether the schema has reminders (RemindAttr).
func (s Schema) Reminds() bool { return s.RemindAttr != "" }

// ReminderFor is the reminder schedule of an armed item; ok is false when
// the schema has no reminders, or the item is not armed or has no
// reminder time. Whether that time is still ahead is the caller's
// question: a reminder whose time has passed is not scheduled.
func (s Schema) ReminderFor(it Item) (sc Schedule, ok bool) {
	if !s.Reminds() || !s.Armed(it) || it.Remind.IsZero() {
		return Schedule{}, false
	}
	due := it.Due.UTC().Truncate(time.Second)
	at := it.Remind.UTC().Truncate(time.Second)
	return Schedule{
		Name:        s.ReminderName(it.Key),
		At:          at,
		ClientToken: s.ReminderToken(it.Key, it.Token, due, at),
		Payload:     Payload{Key: it.Key, Due: due, Remind: at},
	}, true
}

// ReminderToken is the scheduler's idempotency token for the reminder
// schedule of an item at due with reminder time remind: derived like
// ClientToken, from both times, so it never equals a due-time token.
func (s Schema) ReminderToken(k Key, token string, due, remind time.Time) string {
	seed := token
	if seed == "" {
		seed = "key\x00" + k.Partition + "\x00" + k.Sort
	}
	sum := sha256.Sum256([]byte(seed + "|" + FormatTime(due) + "|remind|" + FormatTime(remind)))
	return hex.EncodeToString(sum[:])
}

// ClientToken is the scheduler's idempotency token for the schedule of an
// item at due: retries of one create share it, a new due time gets a new
// one. It derives from the item's token, or from its key when the writer
// set none. 64 hex characters, the scheduler's limit.
func (s Schema) ClientToken(k Key, token string, due time.Time) string {
	seed := token
	if seed == "" {
		seed = "key\x00" + k.Partition + "\x00" + k.Sort
	}
	sum := sha256.Sum256([]byte(seed + "|" + FormatTime(due)))
	return hex.EncodeToString(sum[:])
}

// Payload is what a schedule hands the firing function, and what the
// target receives: the item's key and the due time the schedule was made
// for. The claim compares that due time with the item's, so a schedule
// left over from a moved due time never fires the item.
//
// A reminder schedule's payload also carries the reminder time (Remind,
// zero for the due-time schedule): its firing is a reminder, claimed with
// RemindClaim, and it too compares both times with the item's.
type Payload struct {
	Key    Key
	Due    time.Time
	Remind time.Time
}

// Equal reports whether p and q name the same item and the same instants.
func (p Payload) Equal(q Payload) bool {
	return p.Key == q.Key && p.Due.Equal(q.Due) && p.Remind.Equal(q.Remind)
}

// IsZero reports whether p is the zero payload.
func (p Payload) IsZero() bool { return p.Key == (Key{}) && p.Due.IsZero() && p.Remind.IsZero() }

// IsReminder reports whether p is a reminder schedule's payload.
func (p Payload) IsReminder() bool { return !p.Remind.IsZero() }

// EncodePayload renders a payload as a JSON object named like the item:
// the key attributes and the due attribute, all strings. With Default:
// {"dueAt":"…","pk":"…","sk":"…"}. A reminder's payload adds the
// reminder attribute (RemindAttr "remindAt": {"dueAt":"…","pk":"…",
// "remindAt":"…","sk":"…"}); the due-time payload stays as it was.
func (s Schema) EncodePayload(p Payload) string {
	m := s.Attrs(p.Key)
	m[s.DueAttr] = FormatTime(p.Due)
	if p.IsReminder() && s.Reminds() {
		m[s.RemindAttr] = FormatTime(p.Remind)
	}
	b, _ := json.Marshal(m) // a map of strings always marshals
	return string(b)
}

// DecodePayload reads a payload that EncodePayload wrote.
func (s Schema) DecodePayload(b []byte) (Payload, error) {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return Payload{}, fmt.Errorf("decode schedule payload: %w", err)
	}
	it, err := s.ItemFrom(m)
	if err != nil {
		return Payload{}, fmt.Errorf("schedule payload: %w", err)
	}
	due, err := time.Parse(time.RFC3339, m[s.DueAttr])
	if err != nil {
		return Payload{}, fmt.Errorf("schedule payload %s: %w", s.DueAttr, err)
	}
	out := Payload{Key: it.Key, Due: due.UTC()}
	if v := m[s.RemindAttr]; s.Reminds() && v != "" {
		r, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return Payload{}, fmt.Errorf("schedule payload %s: %w", s.RemindAttr, err)
		}
		out.Remind = r.UTC()
	}
	return out, nil
}

// EnvVar is the environment variable through which the constructs hand a
// function its schema (EnvValue); FromEnv reads it. The contract declares
// it (it imports nothing of the module); internal/core/envvars lists it as
// ItemSchema.
const EnvVar = "UNSCHEDULE_ITEM_SCHEMA"

// EnvValue renders the schema for EnvVar.
func (s Schema) EnvValue() string {
	b, _ := json.Marshal(s) // strings, bools and a slice always marshal
	return string(b)
}

// FromEnv reads the schema from EnvVar: Default when unset. It fails on a
// value that does not parse or validate.
func FromEnv() (Schema, error) { return Parse(os.Getenv(EnvVar)) }

// Parse reads an EnvValue ("" gives Default).
func Parse(v string) (Schema, error) {
	if v == "" {
		return Default(), nil
	}
	var s Schema
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return Schema{}, fmt.Errorf("%s: %w", EnvVar, err)
	}
	s = s.WithDefaults()
	if err := s.Validate(); err != nil {
		return Schema{}, fmt.Errorf("%s: %w", EnvVar, err)
	}
	return s, nil
}

// TimeLayout is how the contract writes instants.
const TimeLayout = "2006-01-02T15:04:05Z"

// FormatTime renders t in TimeLayout, UTC at whole seconds ("" for the
// zero time).
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Truncate(time.Second).Format(TimeLayout)
}

// ParseTime reads an RFC 3339 date-time in any of its spellings ("" gives
// the zero time): any offset ("Z", "+00:00", "+01:00", "-05:00"),
// fractional seconds ("08:00:00.000Z", "08:00:00.123456Z"), and a lower
// case "t" and "z", which RFC 3339 section 5.6 allows
// (https://www.rfc-editor.org/rfc/rfc3339#section-5.6) and Go's parser
// does not. It returns the instant in UTC at whole seconds, rounded up:
// a due time of 08:00:00.5 fires at 08:00:01, never before the instant
// written. A leap second (":60") does not parse.
func ParseTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, strings.ToUpper(v))
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", v, err)
	}
	if r := t.Truncate(time.Second); !r.Equal(t) {
		t = r.Add(time.Second)
	}
	return t.UTC(), nil
}
