// Package contract is the public contract of a schedule-on-write item: the
// one place that says which attributes of a DynamoDB item arm a one-off
// schedule, what the schedule is named, which idempotency token creates
// it, what it hands the target at the due time, and the conditional write
// that claims the firing so the target runs once.
//
// An adopter's own code imports it to write items that the
// constructs/scheduleonwrite and constructs/cancellation pipeline will
// schedule, move, cancel and fire. Each adopter brings a schema of its
// own; Default names no app's items.
//
// A firing writes the item twice, and the two writes mean different
// things:
//
//   - The claim (Claim), before the target runs: StateAttr := FiredState,
//     FiredAtAttr := now and ClaimAtAttr := now. It says "the firing was
//     claimed": this attempt, and no other, may run the target, which may
//     still fail, time out or never run. A retry that finds no delivery
//     after the lease takes the right over (TakeOver: ClaimAtAttr := now).
//   - The delivery mark (MarkDelivered), after the target ran and returned
//     success: DeliveredAtAttr := now. It says "the target ran".
//
// So FiredState alone does not mean that the target ran: an item in
// FiredState without DeliveredAtAttr was claimed and not (yet) delivered.
// Read DeliveredAtAttr to know that the target ran.
//
// The package imports neither the AWS SDK nor the CDK. Its conditional
// writes are rendered as DynamoDB expression strings (Update), which any
// SDK can send, and as plain Go predicates (Schema.Claimable and
// friends), which in-memory stores use so that they agree with DynamoDB.
//
// Every attribute the contract reads or writes is a DynamoDB string (S).
// The times the library writes are RFC 3339 in UTC at whole seconds
// (FormatTime), so two equal instants give equal strings and string
// comparison orders them. The due time and reminder time are the
// writer's: any RFC 3339 spelling is read (ParseTime), and the
// conditional writes compare them as stored (Spelling, AsStored), since
// DynamoDB compares strings, not instants.
package contract
