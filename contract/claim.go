package contract

import (
	"maps"
	"slices"
	"strings"
	"time"
)

// Update is one conditional UpdateItem, rendered without an SDK: the key,
// the update and condition expressions, and their placeholders (#nN for
// names, :vN for values: strings in Values, numbers in Numbers). An
// adapter sends it as is; when the condition fails the write changed
// nothing.
type Update struct {
	Key                 map[string]string
	UpdateExpression    string
	ConditionExpression string
	Names               map[string]string
	Values              map[string]string
	// Numbers are the value placeholders that are numbers (DynamoDB's N),
	// in decimal; none unless the write ADDs (ClaimOptions.Add).
	Numbers map[string]string
}

// ClaimOptions adds the adopter's own attributes to the claim's write.
type ClaimOptions struct {
	// AlsoSet sets these attributes in the same write.
	AlsoSet map[string]string
	// AlsoRemove removes these attributes in the same write.
	AlsoRemove []string
	// Add adds each number to its attribute in the same write (ADD attr
	// n: an absent attribute becomes n). DynamoDB refuses the write when
	// the attribute holds anything but a number, such as a string.
	Add map[string]int64
}

// apply adds the options' clauses to e, each list in a fixed order.
func (o ClaimOptions) apply(e *Expr) {
	for _, n := range slices.Sorted(maps.Keys(o.AlsoSet)) {
		e.Set(n, o.AlsoSet[n])
	}
	for _, n := range o.AlsoRemove {
		e.Remove(n)
	}
	for _, n := range slices.Sorted(maps.Keys(o.Add)) {
		e.Add(n, o.Add[n])
	}
}

// Claim is the conditional write that fires an item exactly once: only if
// its state is armed **and** its due attribute still holds due, it moves
// the item to FiredState, records FiredAtAttr, and takes the right to run
// the target (ClaimAtAttr = now). A schedule left over from a moved due
// time, or one whose cancellation was late, fails the condition and
// changes nothing. due is compared as a string, so it must be the due
// time as stored (Spelling.Due; AsStored finds it). Claimable is the same
// rule in Go.
func (s Schema) Claim(k Key, due string, now time.Time, opt ClaimOptions) Update {
	e := NewExpr()
	vals := make([]string, len(s.ArmedStates))
	for i, a := range s.ArmedStates {
		vals[i] = e.Value(a)
	}
	cond := e.Name(s.StateAttr) + " IN (" + strings.Join(vals, ", ") + ") AND " +
		e.Name(s.DueAttr) + " = " + e.Value(due)
	e.Set(s.StateAttr, s.FiredState)
	e.Set(s.FiredAtAttr, FormatTime(now))
	e.Set(s.ClaimAtAttr, FormatTime(now))
	opt.apply(e)
	return e.Update(s.Attrs(k), cond)
}

// Claimable reports whether Claim's condition holds for it at due: as
// DynamoDB does, it compares the due attribute as stored with due, string
// with string.
func (s Schema) Claimable(it Item, due string) bool {
	return s.Armed(it) && it.Spelling().Due == due
}

// TakeOver is the conditional write by which a retried firing takes the
// right to run the target from an attempt that claimed it and did not
// record delivery: only if the item is fired for due, not delivered, and
// claimed by the library for due (ClaimAtAttr at or after due: see
// ClaimedFor) at least lease ago. An item in FiredState that the library
// never claimed (a writer completed it with that state) fails it, so its
// target never runs. due is the due time as stored, as for Claim.
// TakeOverable is the same rule in Go. opts, at most one, adds the
// adopter's own attributes as Claim's do.
func (s Schema) TakeOver(k Key, due string, now time.Time, lease time.Duration, opts ...ClaimOptions) Update {
	e := NewExpr()
	claim := e.Name(s.ClaimAtAttr)
	cond := e.Name(s.StateAttr) + " = " + e.Value(s.FiredState) +
		" AND " + e.Name(s.DueAttr) + " = " + e.Value(due) +
		" AND attribute_not_exists(" + e.Name(s.DeliveredAtAttr) + ")" +
		" AND attribute_exists(" + claim + ") AND " + claim + " >= " + e.Value(claimFloor(due)) +
		" AND " + claim + " <= " + e.Value(FormatTime(now.Add(-lease)))
	e.Set(s.ClaimAtAttr, FormatTime(now))
	for _, o := range opts {
		o.apply(e)
	}
	return e.Update(s.Attrs(k), cond)
}

// ClaimedFor reports whether it carries the library's claim mark for due:
// ClaimAtAttr, which only Claim and TakeOver write, at or after due (a
// firing claims only once its due time came). A writer's move into
// FiredState leaves no such mark; a mark from a firing at an earlier due
// time is before due. Both are compared as FormatTime strings in
// DynamoDB, which order as the instants.
func (s Schema) ClaimedFor(it Item, due time.Time) bool {
	return !it.ClaimAt.IsZero() && !it.ClaimAt.Before(due.UTC().Truncate(time.Second))
}

// Undelivered reports whether it is fired by the library for due
// (ClaimedFor) and its target has not run: the one state in which a
// retried firing may still run it.
func (s Schema) Undelivered(it Item, due time.Time) bool {
	return it.State == s.FiredState && it.Due.Equal(due.UTC().Truncate(time.Second)) && !it.Delivered &&
		s.ClaimedFor(it, due)
}

// TakeOverable reports whether TakeOver's condition holds for it (the due
// attribute compared as stored, as DynamoDB does).
func (s Schema) TakeOverable(it Item, due string, now time.Time, lease time.Duration) bool {
	return it.State == s.FiredState && it.Spelling().Due == due && !it.Delivered &&
		s.ClaimedFor(it, it.Due) && !it.ClaimAt.After(now.Add(-lease).Truncate(time.Second))
}

// claimFloor is the earliest claim mark that counts as a claim for the
// stored due time: the instant in FormatTime's spelling, which ClaimAtAttr
// always uses, so that DynamoDB's string order is the instants' order.
func claimFloor(due string) string {
	t, err := ParseTime(due)
	if err != nil {
		return due
	}
	return FormatTime(t)
}

// IsClaim reports whether the change from before to after is the
// library's own claim (Claim): after is in FiredState with a claim mark
// for its due time (ClaimedFor) that before did not carry. Any other
// move into FiredState is a writer's, which completes the item: its
// schedule must be cancelled, since no firing will run its target.
func (s Schema) IsClaim(before, after Item) bool {
	return after.State == s.FiredState && s.ClaimedFor(after, after.Due) && !after.ClaimAt.Equal(before.ClaimAt)
}

// Markable reports whether MarkDelivered's condition holds for it: it is
// fired and no delivery is recorded.
func (s Schema) Markable(it Item) bool { return it.State == s.FiredState && !it.Delivered }

// MarkDelivered records that the target ran (DeliveredAtAttr = at), only
// if the item is fired and no delivery is recorded yet.
func (s Schema) MarkDelivered(k Key, at time.Time, opt ClaimOptions) Update {
	e := NewExpr()
	cond := e.Name(s.StateAttr) + " = " + e.Value(s.FiredState) +
		" AND attribute_not_exists(" + e.Name(s.DeliveredAtAttr) + ")"
	e.Set(s.DeliveredAtAttr, FormatTime(at))
	opt.apply(e)
	return e.Update(s.Attrs(k), cond)
}

// RemindClaim is the conditional write by which a reminder's firing takes
// the right to deliver it, changing no state: only if the item is armed,
// its due time is still due and its reminder time still remind, that
// reminder is not delivered yet (RemindedAttr), and no other attempt
// took it less than lease ago (RemindClaimAtAttr absent or at least lease
// old). It sets RemindClaimAtAttr = now. A reminder left over from a
// moved due time or reminder time, or from a completed, fired or removed
// item, fails the condition. The first firing and a retry that takes over
// from a crashed one are the same write. sp is the due time and reminder
// time as stored (as for Claim); RemindedAttr, which only MarkReminded
// writes, is compared in FormatTime's spelling. RemindClaimable is the
// same rule in Go.
func (s Schema) RemindClaim(k Key, sp Spelling, now time.Time, lease time.Duration) Update {
	e := NewExpr()
	vals := make([]string, len(s.ArmedStates))
	for i, a := range s.ArmedStates {
		vals[i] = e.Value(a)
	}
	remind, _ := ParseTime(sp.Remind)
	done, claim := e.Name(s.RemindedAttr), e.Name(s.RemindClaimAtAttr)
	cond := e.Name(s.StateAttr) + " IN (" + strings.Join(vals, ", ") + ")" +
		" AND " + e.Name(s.DueAttr) + " = " + e.Value(sp.Due) +
		" AND " + e.Name(s.RemindAttr) + " = " + e.Value(sp.Remind) +
		" AND (attribute_not_exists(" + done + ") OR " + done + " <> " + e.Value(FormatTime(remind)) + ")" +
		" AND (attribute_not_exists(" + claim + ") OR " + claim + " <= " + e.Value(FormatTime(now.Add(-lease))) + ")"
	e.Set(s.RemindClaimAtAttr, FormatTime(now))
	return e.Update(s.Attrs(k), cond)
}

// ReminderOpen reports whether the reminder at remind of the item armed
// for due is still to be delivered: the item is armed with those times
// and no delivery of that reminder is recorded.
func (s Schema) ReminderOpen(it Item, due, remind time.Time) bool {
	remind = remind.UTC().Truncate(time.Second)
	return s.Reminds() && s.Armed(it) && it.Due.Equal(due.UTC().Truncate(time.Second)) &&
		it.Remind.Equal(remind) && !it.Reminded.Equal(remind)
}

// RemindClaimable reports whether RemindClaim's condition holds for it
// (the due time and reminder time compared as stored, as DynamoDB does).
func (s Schema) RemindClaimable(it Item, sp Spelling, now time.Time, lease time.Duration) bool {
	remind, _ := ParseTime(sp.Remind)
	return s.Reminds() && s.Armed(it) && it.Spelling() == sp && !it.Reminded.Equal(remind) &&
		(it.RemindClaimAt.IsZero() || !it.RemindClaimAt.After(now.Add(-lease).Truncate(time.Second)))
}

// MarkReminded records that the reminder at remind was delivered
// (RemindedAttr = remind), only if the item exists and it is not
// recorded yet.
// RemindMarkable is the same rule in Go.
func (s Schema) MarkReminded(k Key, remind time.Time) Update {
	e := NewExpr()
	done := e.Name(s.RemindedAttr)
	rv := e.Value(FormatTime(remind))
	cond := "attribute_exists(" + e.Name(s.PartitionKey) + ") AND (attribute_not_exists(" + done + ") OR " + done + " <> " + rv + ")"
	e.sets = append(e.sets, done+" = "+rv)
	return e.Update(s.Attrs(k), cond)
}

// RemindMarkable reports whether MarkReminded's condition holds for it.
func (s Schema) RemindMarkable(it Item, remind time.Time) bool {
	return !it.Reminded.Equal(remind.UTC().Truncate(time.Second))
}
