// Package firetest is the conformance suite of the fire store port
// (fire.Store, and fire.ReminderStore with reminders): the DynamoDB item
// store against dynalite and the in-memory table both run
// FireStoreContract. It imports the core alone; the caller passes the
// table.
package firetest

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/suitecheck"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
)

// FireBackend is an item table that FireStoreContract tests: the store
// under test, and the plain writes and reads a writer that is not ours
// does (PutItem, GetItem of every attribute).
type FireBackend struct {
	Store fire.Store
	// Put writes an item as is (an unconditional PutItem).
	Put func(t *testing.T, attrs map[string]string)
	// Attrs reads every string attribute of an item (nil when missing).
	Attrs func(t *testing.T, k contract.Key) map[string]string
}

// ConsumerSchema is an adopter's schema: keys tenantId/jobId, due
// attribute runAt, armed states Queued and Retrying, fired state Done.
func ConsumerSchema() contract.Schema {
	return contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt",
		ArmedStates: []string{"Queued", "Retrying"}, FiredState: "Done", ScheduleNamePrefix: "job-"}.WithDefaults()
}

// FireStoreContract is the behaviour of the contract's conditional writes
// (contract.Schema.Claim, TakeOver, MarkDelivered, and with reminders
// RemindClaim and MarkReminded of a fire.ReminderStore) that every fire.Store
// shares with DynamoDB, for the fixture's schema (timertest.Schema, whose
// state attribute is the reserved word "status"), the contract's neutral
// default and a consumer's: the DynamoDB item store against dynalite and
// the in-memory table both run it. newBackend
// must return an empty table of the schema.
func FireStoreContract(t *testing.T, newBackend func(t *testing.T, s contract.Schema) FireBackend) {
	withReminders := ConsumerSchema()
	withReminders.RemindAttr = "remindBy"
	for name, s := range map[string]contract.Schema{"every attribute": timertest.Schema, "neutral default": contract.Default(), "consumer": ConsumerSchema(),
		"consumer with reminders": withReminders.WithDefaults()} {
		t.Run(name, func(t *testing.T) { fireStoreContract(t, s, newBackend) })
	}
}

func fireStoreContract(t *testing.T, s contract.Schema, newBackend func(t *testing.T, s contract.Schema) FireBackend) {
	ctx := context.Background()
	due := timertest.T0
	now := due.Add(30 * time.Second)
	const lease = time.Minute
	k := contract.Key{Partition: "p-1", Sort: "s-1"}
	armed := func(state string, at time.Time) map[string]string {
		a := s.Attrs(k)
		a[s.StateAttr], a[s.DueAttr], a["note"] = state, contract.FormatTime(at), "the writer's own"
		return a
	}
	with := func(a map[string]string, kv ...string) map[string]string {
		a = maps.Clone(a)
		for i := 0; i < len(kv); i += 2 {
			a[kv[i]] = kv[i+1]
		}
		return a
	}
	wantFailed := func(t *testing.T, what string, err error) {
		t.Helper()
		suitecheck.WantErr(t, what, err, fire.ErrConditionFailed)
	}
	// onceAt runs the core at at twice through run: the first fires and
	// delivers want, the second skips.
	onceAt := func(t *testing.T, b FireBackend, at time.Time, want contract.Payload,
		run func(core *fire.Core, d fire.Deliverer) (fire.Outcome, error)) {
		t.Helper()
		core := suitecheck.Need(fire.New(fire.Config{Schema: s, Store: b.Store, Now: func() time.Time { return at }}))(t)
		var got []contract.Payload
		d := fire.DeliverFunc(func(_ context.Context, p contract.Payload) error { got = append(got, p); return nil })
		for i, want := range []fire.Outcome{fire.Fired, fire.Skipped} {
			if out, err := run(core, d); err != nil || out != want {
				t.Fatalf("run %d: %v, %v; want %v", i, out, err, want)
			}
		}
		if len(got) != 1 || !got[0].Equal(want) {
			t.Fatalf("delivered %+v, want once %+v", got, want)
		}
	}
	p := contract.Payload{Key: k, Due: due}
	ts := contract.FormatTime

	t.Run("claim fires an armed item at its due time, once", func(t *testing.T) {
		for _, state := range s.ArmedStates {
			b := newBackend(t, s)
			b.Put(t, armed(state, due))
			if err := b.Store.Claim(ctx, p, now); err != nil {
				t.Fatalf("claim of %s: %v", state, err)
			}
			fired := with(armed(state, due), s.StateAttr, s.FiredState, s.FiredAtAttr, ts(now), s.ClaimAtAttr, ts(now))
			suitecheck.Equal(t, "after the claim", b.Attrs(t, k), fired)
			wantFailed(t, "second claim", b.Store.Claim(ctx, p, now.Add(time.Hour)))
			suitecheck.Equal(t, "after a second claim", b.Attrs(t, k), fired)
		}
	})

	t.Run("claim refuses what is not armed for that due time", func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			attrs map[string]string
		}{
			{"due time moved", armed(s.ArmedStates[0], due.Add(time.Hour))},
			{"left the armed states", armed("Cancelled", due)},
			{"fired already", armed(s.FiredState, due)},
			{"no due time", with(armed(s.ArmedStates[0], due), s.DueAttr, "")},
		} {
			t.Run(tc.name, func(t *testing.T) {
				b := newBackend(t, s)
				b.Put(t, tc.attrs)
				wantFailed(t, "claim", b.Store.Claim(ctx, p, now))
				suitecheck.Equal(t, "unchanged", b.Attrs(t, k), tc.attrs)
			})
		}
		b := newBackend(t, s)
		wantFailed(t, "claim of a missing item", b.Store.Claim(ctx, p, now))
		if got := b.Attrs(t, k); got != nil {
			t.Fatalf("a claim of a missing item created it: %v", got)
		}
	})

	t.Run("take over: after the lease, for that due time, never after delivery", func(t *testing.T) {
		b := newBackend(t, s)
		b.Put(t, armed(s.ArmedStates[0], due))
		suitecheck.Must(t, b.Store.Claim(ctx, p, now))
		for _, step := range []struct {
			name string
			due  time.Time
			at   time.Time
			ok   bool
		}{
			{"within the lease", due, now.Add(lease - time.Second), false},
			{"another due time", due.Add(time.Hour), now.Add(10 * lease), false},
			{"after the lease", due, now.Add(lease), true},
			{"within the new lease", due, now.Add(lease + 30*time.Second), false},
		} {
			before := b.Attrs(t, k)
			err := b.Store.TakeOver(ctx, contract.Payload{Key: k, Due: step.due}, step.at, lease)
			if !step.ok {
				wantFailed(t, step.name, err)
				suitecheck.Equal(t, step.name+": unchanged", b.Attrs(t, k), before)
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", step.name, err)
			}
			suitecheck.Equal(t, step.name, b.Attrs(t, k), with(before, s.ClaimAtAttr, ts(step.at)))
		}
		it, found, err := b.Store.Get(ctx, k)
		if err != nil || !found || !s.Undelivered(it, due) {
			t.Fatalf("Get = %+v, %v, %v; want the item fired and undelivered", it, found, err)
		}
		suitecheck.Must(t, b.Store.MarkDelivered(ctx, k, now.Add(2*lease)))
		delivered := b.Attrs(t, k)
		if delivered[s.DeliveredAtAttr] != ts(now.Add(2*lease)) {
			t.Fatalf("delivery not recorded: %v", delivered)
		}
		wantFailed(t, "second record", b.Store.MarkDelivered(ctx, k, now.Add(3*lease)))
		wantFailed(t, "take over after delivery", b.Store.TakeOver(ctx, p, now.Add(time.Hour), lease))
		suitecheck.Equal(t, "after delivery", b.Attrs(t, k), delivered)
	})

	t.Run("take over refuses an item in the fired state that the library did not claim", func(t *testing.T) {
		// A writer completes the item with the fired state: no claim
		// mark for this due time, so no firing may run its target.
		for _, tc := range []struct {
			name  string
			attrs map[string]string
		}{
			{"never claimed", armed(s.FiredState, due)},
			{"claimed for an earlier due time", with(armed(s.FiredState, due), s.ClaimAtAttr, ts(due.Add(-time.Second)))},
		} {
			t.Run(tc.name, func(t *testing.T) {
				b := newBackend(t, s)
				b.Put(t, tc.attrs)
				wantFailed(t, "take over", b.Store.TakeOver(ctx, p, now.Add(time.Hour), lease))
				suitecheck.Equal(t, "unchanged", b.Attrs(t, k), tc.attrs)
				it, found, err := b.Store.Get(ctx, k)
				if err != nil || !found || s.Undelivered(it, due) {
					t.Fatalf("Get = %+v, %v, %v; want an item that is not fired and undelivered", it, found, err)
				}
			})
		}
	})

	t.Run("mark delivered needs a fired item", func(t *testing.T) {
		b := newBackend(t, s)
		b.Put(t, armed(s.ArmedStates[0], due))
		wantFailed(t, "armed", b.Store.MarkDelivered(ctx, k, now))
		wantFailed(t, "missing", b.Store.MarkDelivered(ctx, contract.Key{Partition: "p-2", Sort: "s-2"}, now))
		if _, found, err := b.Store.Get(ctx, contract.Key{Partition: "p-2", Sort: "s-2"}); err != nil || found {
			t.Fatalf("Get of a missing item: found %v, %v", found, err)
		}
	})

	t.Run("a reminder is claimed only while armed with both times, delivered once, state unchanged", func(t *testing.T) {
		if !s.Reminds() {
			return
		}
		rem := due.Add(-15 * time.Minute)
		at := rem.Add(time.Second)
		rp := contract.Payload{Key: k, Due: due, Remind: rem}
		item := with(armed(s.ArmedStates[0], due), s.RemindAttr, ts(rem))
		for _, tc := range []struct {
			name  string
			attrs map[string]string
		}{
			{"reminder moved", with(item, s.RemindAttr, ts(rem.Add(time.Minute)))},
			{"due time moved", with(item, s.DueAttr, ts(due.Add(time.Hour)))},
			{"left the armed states", with(item, s.StateAttr, "Cancelled")},
			{"fired", with(item, s.StateAttr, s.FiredState)},
			{"reminded already", with(item, s.RemindedAttr, ts(rem))},
			{"claim held", with(item, s.RemindClaimAtAttr, ts(at.Add(-time.Second)))},
		} {
			t.Run(tc.name, func(t *testing.T) {
				b := newBackend(t, s)
				b.Put(t, tc.attrs)
				wantFailed(t, "remind claim", b.Store.(fire.ReminderStore).RemindClaim(ctx, rp, at, lease))
				suitecheck.Equal(t, "unchanged", b.Attrs(t, k), tc.attrs)
			})
		}
		b := newBackend(t, s)
		rs := b.Store.(fire.ReminderStore)
		wantFailed(t, "mark reminded of a missing item", rs.MarkReminded(ctx, rp))
		if got := b.Attrs(t, k); got != nil {
			t.Fatalf("MarkReminded of a missing item created it: %v", got)
		}
		b.Put(t, item)
		onceAt(t, b, at, rp, func(core *fire.Core, d fire.Deliverer) (fire.Outcome, error) { return core.Remind(ctx, rp, rs, d) })
		suitecheck.Equal(t, "after the reminder", b.Attrs(t, k), with(item, s.RemindClaimAtAttr, ts(at), s.RemindedAttr, ts(rem)))
	})

	t.Run("every writer's spelling of the due time is claimed once, and kept", func(t *testing.T) {
		// DynamoDB compares the stored string: the store must find the
		// spelling the item holds (contract.AsStored), and a spelling of
		// another instant must still fail.
		rems, later := contract.WriterSpellings(due.Add(-15*time.Minute)), contract.WriterSpellings(due.Add(time.Second))
		for i, v := range contract.WriterSpellings(due) {
			t.Run(v, func(t *testing.T) {
				b := newBackend(t, s)
				item := with(armed(s.ArmedStates[0], due), s.DueAttr, v)
				rem := due.Add(-15 * time.Minute)
				if s.Reminds() {
					item[s.RemindAttr] = rems[(i+3)%len(rems)] // another writer's spelling
				}
				b.Put(t, item)
				if s.Reminds() {
					rs := b.Store.(fire.ReminderStore)
					rp := contract.Payload{Key: k, Due: due, Remind: rem}
					if err := rs.RemindClaim(ctx, rp, now, lease); err != nil {
						t.Fatalf("remind claim: %v", err)
					}
					wantFailed(t, "second remind claim", rs.RemindClaim(ctx, rp, now, lease))
					item[s.RemindClaimAtAttr] = ts(now)
				}
				if err := b.Store.Claim(ctx, p, now); err != nil {
					t.Fatalf("claim: %v", err)
				}
				fired := with(item, s.StateAttr, s.FiredState, s.FiredAtAttr, ts(now), s.ClaimAtAttr, ts(now))
				suitecheck.Equal(t, "after the claim", b.Attrs(t, k), fired)
				wantFailed(t, "second claim", b.Store.Claim(ctx, p, now))
				wantFailed(t, "take over within the lease", b.Store.TakeOver(ctx, p, now, lease))
				if err := b.Store.TakeOver(ctx, p, now.Add(lease), lease); err != nil {
					t.Fatalf("take over after the lease: %v", err)
				}
				suitecheck.Equal(t, "after the take-over", b.Attrs(t, k), with(fired, s.ClaimAtAttr, ts(now.Add(lease))))

				moved := with(armed(s.ArmedStates[0], due), s.DueAttr, later[i])
				b.Put(t, moved)
				wantFailed(t, "claim of another instant", b.Store.Claim(ctx, p, now))
				suitecheck.Equal(t, "another instant: unchanged", b.Attrs(t, k), moved)
			})
		}
	})

	t.Run("the core fires a plain put once", func(t *testing.T) {
		b := newBackend(t, s)
		b.Put(t, armed(s.ArmedStates[0], due))
		onceAt(t, b, now, p, func(core *fire.Core, d fire.Deliverer) (fire.Outcome, error) { return core.Fire(ctx, p, d) })
	})
}
