package campaigns

import (
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/unschedule/unschedule/constructs/internal/alarms"
	"github.com/unschedule/unschedule/constructs/internal/grants"
	"github.com/unschedule/unschedule/constructs/internal/propcheck"
	"github.com/unschedule/unschedule/constructs/internal/resource"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/campaigns/limits"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
)

// table is ExistingTable, or a new table (tableProps with TableProps
// merged over them, then what the timer needs) with the open and owner
// indexes.
func (x *Campaigns) table(p CampaignsProps, needs scheduleonwrite.TimerNeeds) {
	if p.ExistingTable != nil {
		x.Table = p.ExistingTable
		return
	}
	merged := propcheck.Merge(*tableProps(p.RemovalPolicy, resource.Protected(p.RemovalPolicy, p.DeletionProtection), *p.LiveProgress), p.TableProps)
	needs.ApplyTo(&merged)
	t := awsdynamodb.NewTable(x.Construct, jsii.String("Table"), &merged)
	t.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String(tk.OpenIndex),
		PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(tk.OpenAttr), Type: awsdynamodb.AttributeType_STRING},
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String(tk.SortKey), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType: awsdynamodb.ProjectionType_ALL,
	})
	t.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:        jsii.String(tk.OwnerIndex),
		PartitionKey:     &awsdynamodb.Attribute{Name: jsii.String(tk.OwnerAttr), Type: awsdynamodb.AttributeType_STRING},
		SortKey:          &awsdynamodb.Attribute{Name: jsii.String(tk.CreatedAttr), Type: awsdynamodb.AttributeType_STRING},
		ProjectionType:   awsdynamodb.ProjectionType_INCLUDE,
		NonKeyAttributes: jsii.Strings(tk.OwnerProjection...),
	})
	x.Table = t
}

// validateTable checks the table props: ExistingTable or TableProps, and
// an existing table as synth can read it (keys, indexes, TTL, stream).
func validateTable(id string, p CampaignsProps) {
	propcheck.Exclusive(id, "ExistingTable", p.ExistingTable != nil, "TableProps", p.TableProps != nil)
	if p.ExistingTable == nil {
		if tp := p.TableProps; tp != nil && (tp.PartitionKey != nil || tp.SortKey != nil) {
			panic(fmt.Sprintf("%s: TableProps sets the table's keys, which the campaign code reads as %q and %q: leave PartitionKey and SortKey unset",
				id, tk.PartitionKey, tk.SortKey))
		}
		return
	}
	if p.DeletionProtection != nil {
		panic(fmt.Sprintf("%s: DeletionProtection applies to the table this construct creates, not to ExistingTable: set it on your table instead", id))
	}
	info := resource.InspectTable(p.ExistingTable)
	if *p.LiveProgress && !info.HasStreamAttribute {
		panic(fmt.Sprintf("%s: ExistingTable has no stream, which LiveProgress reads: give it a stream of new images "+
			"(awsdynamodb.TableProps.Stream = StreamViewType_NEW_IMAGE) or import it with its TableStreamArn, or set LiveProgress false", id))
	}
	if view := awsdynamodb.StreamViewType(info.StreamView); *p.LiveProgress && view != "" && !scheduleonwrite.StreamCarries(view, awsdynamodb.StreamViewType_NEW_IMAGE) {
		panic(fmt.Sprintf("%s: ExistingTable's stream (%q) does not carry the new images LiveProgress reads: give it a stream of %s "+
			"(awsdynamodb.TableProps.Stream), or set LiveProgress false", id, view, scheduleonwrite.MergeStreamViews(view, awsdynamodb.StreamViewType_NEW_IMAGE)))
	}
	if !info.Known {
		return // imported by attributes: its keys are trusted
	}
	if (info.PartitionKey != "" && info.PartitionKey != tk.PartitionKey) || (info.SortKey != "" && info.SortKey != tk.SortKey) {
		panic(fmt.Sprintf("%s: ExistingTable is keyed %q/%q; the campaign code reads %q/%q (string keys): create the table with those keys",
			id, info.PartitionKey, info.SortKey, tk.PartitionKey, tk.SortKey))
	}
	for _, idx := range []string{tk.OpenIndex, tk.OwnerIndex} {
		if info.GlobalIndexes != nil && !slices.Contains(info.GlobalIndexes, idx) {
			panic(fmt.Sprintf("%s: ExistingTable lacks the global secondary index %q the campaigns query: add it as constructs/campaigns/README.md describes", id, idx))
		}
	}
	if info.TTLAttribute != "" && info.TTLAttribute != limits.ExpiresAttr {
		panic(fmt.Sprintf("%s: ExistingTable's TTL is on %q; the sender limits' counters expire on %q: move the table's TTL there", id, info.TTLAttribute, limits.ExpiresAttr))
	}
}

// validateDeadLetter checks the dead-letter queue props before anything
// is built: they configure the default timer only.
func validateDeadLetter(id string, p CampaignsProps) {
	propcheck.Exclusive(id, "ExistingDeadLetterQueue", p.ExistingDeadLetterQueue != nil, "DeadLetterQueueProps", p.DeadLetterQueueProps != nil)
	if p.Timer != nil && (p.ExistingDeadLetterQueue != nil || p.DeadLetterQueueProps != nil) {
		panic(fmt.Sprintf("%s: ExistingDeadLetterQueue and DeadLetterQueueProps configure the default Scheduler timer, and Timer is set: "+
			"pass them in the timer's props instead (scheduleonwrite.NewSchedulerTimer(&scheduleonwrite.SchedulerTimerProps{ExistingDeadLetterQueue: …}))", id))
	}
}

// validateTimerNeeds checks what the timer asks of the table against the
// campaign table, before anything is built (PlanTimer has checked an
// existing table's stream).
func validateTimerNeeds(id string, n scheduleonwrite.TimerNeeds) {
	if n.TableTTLAttribute != "" && n.TableTTLAttribute != limits.ExpiresAttr {
		panic(fmt.Sprintf("%s: the timer's markers expire through TTL on %q, but the campaign table's TTL is on %q (the sender limits' counters) "+
			"and a table has one TTL attribute: pass scheduleonwrite.NewTTLTimer(&scheduleonwrite.TTLTimerProps{TTLAttribute: %q, …})",
			id, n.TableTTLAttribute, limits.ExpiresAttr, limits.ExpiresAttr))
	}
}

// GrantManageSchedules lets grantee create, move, read and cancel the
// timers of the campaign sends (the timer's GrantModify and GrantRead),
// nothing outside the timer's resources: what a function of yours that
// repairs or cancels sends needs. It reads the timer's Environment.
func (x *Campaigns) GrantManageSchedules(grantee awsiam.IGrantable) awsiam.Grant {
	g := x.Timer.GrantModify(grantee)
	x.Timer.GrantRead(grantee)
	return g
}

// GrantReadCampaigns lets grantee read the table: campaigns, send tasks
// and their indexes (a report or an export of yours).
func (x *Campaigns) GrantReadCampaigns(grantee awsiam.IGrantable) awsiam.Grant {
	g := grants.Table(x.Table, grantee, "dynamodb:GetItem", "dynamodb:Query")
	grants.Index(x.Table, tk.OpenIndex, grantee, "dynamodb:Query")
	grants.Index(x.Table, tk.OwnerIndex, grantee, "dynamodb:Query")
	return g
}

// GrantStartProvisioning lets grantee invoke the provisioning function
// (event {"campaignId": …}), as the API does.
func (x *Campaigns) GrantStartProvisioning(grantee awsiam.IGrantable) awsiam.Grant {
	return grants.Invoke(x.Provision.Function, grantee)
}

// metric is one campaign function's metric, summed over 5 minutes unless
// opts say otherwise.
func (x *Campaigns) metric(fn, name string, opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return alarms.Metric(x.Construct, fn, name, opts)
}

// MetricSends is the emails sent (CampaignSendsSent).
func (x *Campaigns) MetricSends(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return x.metric(campaignmetrics.FunctionCampaignSend, campaignmetrics.CampaignSendsSent, opts)
}

// MetricSendErrors is the fires that failed and were retried
// (CampaignSendErrors).
func (x *Campaigns) MetricSendErrors(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return x.metric(campaignmetrics.FunctionCampaignSend, campaignmetrics.CampaignSendErrors, opts)
}

// MetricSendsFailed is the sends that ended Failed (CampaignSendsFailed).
func (x *Campaigns) MetricSendsFailed(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return x.metric(campaignmetrics.FunctionCampaignSend, campaignmetrics.CampaignSendsFailed, opts)
}

// MetricSendsSkipped is the fires that sent nothing: a task already done,
// cancelled, suppressed or outside its windows (CampaignSendsSkipped).
func (x *Campaigns) MetricSendsSkipped(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return x.metric(campaignmetrics.FunctionCampaignSend, campaignmetrics.CampaignSendsSkipped, opts)
}

// MetricSchedulesCreated is the schedules provisioning created or found
// (CampaignSchedulesCreated).
func (x *Campaigns) MetricSchedulesCreated(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return x.metric(campaignmetrics.FunctionCampaignProvision, campaignmetrics.CampaignSchedulesCreated, opts)
}

// MetricProvisionThrottles is provisioning's throttled CreateSchedule
// calls, each backed off and retried (CampaignProvisionThrottles): a
// steady value says SchedulerCallsPerSecond is above the account's quota.
func (x *Campaigns) MetricProvisionThrottles(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return x.metric(campaignmetrics.FunctionCampaignProvision, campaignmetrics.CampaignProvisionThrottles, opts)
}
