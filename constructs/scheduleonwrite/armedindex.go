package scheduleonwrite

import (
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/reconciler"
	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/envvars"
)

// AddArmedIndex adds the default armed index (reconciler.ArmedIndex's zero
// value, "armed") to table and returns it with its defaults filled, for
// ReconcilerProps.ArmedIndex: a global secondary index keyed by the
// schema's state attribute and due attribute, projecting the contract's
// attributes. DynamoDB keeps it from every writer's own PutItem, so the
// reconciler Queries the armed states' partitions instead of scanning the
// table. Every item with both attributes is in it (one index write per
// change of them or of a projected attribute); an empty string in either
// is refused, as for any index key. A table this construct creates has
// it; add it to your ExistingTable (docs/decisions/armed-index.md).
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html
func AddArmedIndex(table awsdynamodb.Table, s contract.Schema) *reconciler.ArmedIndex {
	s = s.WithDefaults()
	x := reconciler.ArmedIndex{}.WithDefaults(s)
	nonKey := x.Projected(s)
	table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:        jsii.String(x.Name),
		PartitionKey:     &awsdynamodb.Attribute{Name: jsii.String(x.PartitionAttr), Type: awsdynamodb.AttributeType_STRING},
		SortKey:          &awsdynamodb.Attribute{Name: jsii.String(s.DueAttr), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType:   awsdynamodb.ProjectionType_INCLUDE,
		NonKeyAttributes: jsii.Strings(nonKey...),
	})
	return &x
}

// armedIndexFor is the armed index the reconciler and the TTL watch read:
// the Reconciler prop's (with its defaults), else the one AddArmedIndex
// added to the table created; nil for an ExistingTable without one.
func (s *ScheduleOnWrite) armedIndexFor(p ScheduleOnWriteProps) *reconciler.ArmedIndex {
	if p.Reconciler != nil && p.Reconciler.ArmedIndex != nil {
		x := p.Reconciler.ArmedIndex.WithDefaults(p.Schema)
		return &x
	}
	return s.armedIndex
}

// grantMarkerListing lets fn list the TTL markers, and tells it where: a
// Query of the markers' partition of a state-keyed armed index (the
// markers carry its keys: timerspec.MarkerState), else a Scan of the
// table.
func grantMarkerListing(core TimerCore, fn awslambda.Function) {
	if x := core.ArmedIndex; x != nil && x.StateKeyed(core.Schema) {
		fn.AddEnvironment(jsii.String(envvars.ArmedIndex), jsii.String(x.EnvValue()), nil)
		grants.Index(core.Table, x.Name, fn, "dynamodb:Query")
		return
	}
	grants.Table(core.Table, fn, "dynamodb:Scan")
}
