// Package jobschema is the jobs example's item contract: a job of a
// tenant runs once at its runAt time, unless it left the Queued state or
// was deleted before. The CDK app, the writer and the target share it.
package jobschema

import "github.com/unschedule/unschedule/contract"

// Attribute names and states of a job item.
const (
	Tenant = "tenantId"
	Job    = "jobId"
	RunAt  = "runAt"
	Status = "status"
	Queued = "Queued"
	Done   = "Done"
)

// Schema is the contract of a job item: keys tenantId/jobId, due time
// runAt, state status; Queued keeps the schedule alive, and the expiry
// claim moves the item to Done before the target runs. Done is also the
// writer's "complete" (writer -done): the library tells the two apart by
// the claim mark only it writes (ClaimAtAttr, claimAt), so a job the writer
// completes is cancelled and never runs.
var Schema = contract.Schema{
	PartitionKey:       Tenant,
	SortKey:            Job,
	DueAttr:            RunAt,
	StateAttr:          Status,
	ArmedStates:        []string{Queued},
	FiredState:         Done,
	ScheduleNamePrefix: "job-",
}.WithDefaults()
