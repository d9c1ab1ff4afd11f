// Command fire is what every schedule invokes at an item's due time. It
// claims the item (the contract's conditional write) and then invokes the
// target function, TARGET_FUNCTION_ARN, with the payload
// (RequestResponse), and records the delivery once the target succeeded:
// firefn with no in-process target. An adopter whose target is Go code
// runs it in its own firing function instead (firefn.Start with a Target,
// ScheduleOnWriteProps.FireEntry), as the to-do app does (lambdas/todofire).
//
// Environment: TABLE_NAME; UNSCHEDULE_ITEM_SCHEMA (contract.EnvVar,
// optional); TARGET_FUNCTION_ARN (required); FIRE_LEASE_SECONDS
// (optional).
package main

import "github.com/unschedule/unschedule/firefn"

func main() { firefn.Start(nil) }
