// Package tablekeys is the DynamoDB layout of the campaign table, shared
// by the adapters that read and write it
// (internal/campaigns/adapters/campaigntable and .../ses), the construct
// that declares it (constructs/campaigns) and the dynalite tests. No SDK
// here.
//
//	item              pk               sk
//	campaign          C#<campaignId>   META
//	send task         C#<campaignId>   T#<taskId>   (taskId = <campaignId>-<index, 5 digits>: sorts by index)
//	checkpoint        C#<campaignId>   CHECKPOINT   (provisioning)
//	done set          C#<campaignId>   DONE         (the indexes of its terminal tasks: DoneAttr)
//	send record       K#<idempotency>  SEND         (the SES sender's idempotency record)
//	suppressed        S#<list id>      A#<address>  (the construct's suppression list; both lower case)
//
// A task carries OpenAttr only while it is Pending or Running, so the
// sparse index OpenIndex holds exactly the open tasks of every campaign
// (what the reconciler reads). A campaign item carries OwnerAttr, and the
// index OwnerIndex (OwnerAttr, CreatedAttr; OwnerProjection) lists a
// user's campaigns, newest first.
package tablekeys

import "strings"

// Key and index names.
const (
	PartitionKey = "pk"
	SortKey      = "sk"
	// OpenIndex is the sparse global index of open tasks: partition key
	// OpenAttr, sort key SortKey, every attribute projected.
	OpenIndex = "open"
	OpenAttr  = "openShard"
	// OwnerIndex lists a user's campaigns: partition OwnerAttr, sort
	// CreatedAttr, projecting OwnerProjection.
	OwnerIndex  = "owner"
	OwnerAttr   = "owner"
	CreatedAttr = "createdAt"
)

// DoneAttr is the number set of the DONE item: the index of every task
// of the campaign that reached a terminal state.
const DoneAttr = "done"

// Key values.
const (
	CampaignPrefix = "C#"
	TaskPrefix     = "T#"
	SendPrefix     = "K#"
	MetaSK         = "META"
	CheckpointSK   = "CHECKPOINT"
	DoneSK         = "DONE"
	SendSK         = "SEND"
	SuppressPrefix = "S#"
	AddressPrefix  = "A#"
	// OpenValue is the OpenAttr of every open task (one partition: the
	// open tasks are few at any time compared to the index's limits).
	OpenValue = "open"
)

// CampaignPK is the partition of a campaign and its tasks.
func CampaignPK(id string) string { return CampaignPrefix + id }

// SuppressPK is the partition of the suppression list called list (its
// id in lower case: the construct's CampaignsProps.SuppressionListId, which
// scopes the writers' dynamodb:LeadingKeys to it), and SuppressSK an
// address's item in it (already normalized).
func SuppressPK(list string) string    { return SuppressPrefix + strings.ToLower(list) }
func SuppressSK(address string) string { return AddressPrefix + address }

// DefaultSuppressionList is the suppression list's id when the construct
// is given none: a constant, so that nothing a deployment may change
// (the From address, the construct's id) moves the list.
const DefaultSuppressionList = "default"

// TaskSK is a task's sort key.
func TaskSK(taskID string) string { return TaskPrefix + taskID }

// OwnerProjection are the attributes OwnerIndex projects besides the
// keys: a campaign's summary.
var OwnerProjection = []string{"campaignId", "subject", "status", "total", "updatedAt"}
