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
	"github.com/unschedule/unschedule/constructs/internal/schedulegroup"
	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/campaign/limits"
	tk "github.com/unschedule/unschedule/internal/campaign/tablekeys"
	"github.com/unschedule/unschedule/internal/metrics"
)

// table is ExistingTable, or a new table (tableProps with TableProps
// merged over them) with the open and owner indexes.
func (x *Campaigns) table(p CampaignsProps) {
	if p.ExistingTable != nil {
		x.Table = p.ExistingTable
		return
	}
	merged := propcheck.Merge(*tableProps(p.RemovalPolicy, p.DeletionProtection, *p.LiveProgress), p.TableProps)
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
	if p.DeletionProtection {
		panic(fmt.Sprintf("%s: DeletionProtection applies to the table this construct creates, not to ExistingTable: set it on your table instead", id))
	}
	info := resource.InspectTable(p.ExistingTable)
	if *p.LiveProgress && !info.HasStreamAttribute {
		panic(fmt.Sprintf("%s: ExistingTable has no stream, which LiveProgress reads: give it a stream of new images "+
			"(awsdynamodb.TableProps.Stream = StreamViewType_NEW_IMAGE) or import it with its TableStreamArn, or set LiveProgress false", id))
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
// is built.
func validateDeadLetter(id string, p CampaignsProps) {
	propcheck.Exclusive(id, "ExistingDeadLetterQueue", p.ExistingDeadLetterQueue != nil, "DeadLetterQueueProps", p.DeadLetterQueueProps != nil)
	if q := p.ExistingDeadLetterQueue; q != nil && q.Fifo() != nil && *q.Fifo() {
		panic(fmt.Sprintf("%s: ExistingDeadLetterQueue is a FIFO queue: the scheduler accepts only a standard queue as its dead-letter queue", id))
	}
}

// scheduleGroup builds the group, its dead-letter queue and alarm, and
// the role the schedules run as, with the builder the to-do app's
// SchedulerTimer uses.
func (x *Campaigns) scheduleGroup(p CampaignsProps) {
	g := schedulegroup.New(x.Construct, schedulegroup.Props{
		ID: *x.Node().Id(), Target: x.Send.Function, RemovalPolicy: p.RemovalPolicy, AlarmTopic: p.AlarmTopic,
		RoleDescription: "Assumed by the campaign schedules: invoke the send function, send to the DLQ",
		DeadLetterAlarmDescription: fmt.Sprintf("The scheduler gave up invoking the campaign send function (%d retries): those sends did not run. "+
			"The reconciler sends or moves each overdue Pending task within one period; inspect the messages for the cause.", campaign.ScheduleRetries),
		ExistingDeadLetterQueue: p.ExistingDeadLetterQueue, DeadLetterQueueProps: p.DeadLetterQueueProps,
	})
	x.group = g
	x.ScheduleGroup, x.SchedulerRole, x.DeadLetterQueue, x.DeadLetterAlarm = g.ScheduleGroup, g.Role, g.DeadLetterQueue, g.DeadLetterAlarm
}

// grantSchedules lets grantee call actions on the group's campaign
// schedules (camp-*), and pass the scheduler role to the scheduler when
// it may create them.
func (x *Campaigns) grantSchedules(grantee awsiam.IGrantable, actions ...string) awsiam.Grant {
	return x.group.Grant(grantee, campaign.ScheduleNamePrefix, actions...)
}

// GrantManageSchedules lets grantee create, read and delete the campaign
// schedules of the group (and pass the scheduler role to the scheduler),
// nothing outside it: what a function of yours that repairs or cancels
// sends needs.
func (x *Campaigns) GrantManageSchedules(grantee awsiam.IGrantable) awsiam.Grant {
	return x.grantSchedules(grantee, "scheduler:CreateSchedule", "scheduler:GetSchedule", "scheduler:DeleteSchedule")
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
	return x.metric(metrics.FunctionCampaignSend, metrics.CampaignSendsSent, opts)
}

// MetricSendErrors is the fires that failed and were retried
// (CampaignSendErrors).
func (x *Campaigns) MetricSendErrors(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return x.metric(metrics.FunctionCampaignSend, metrics.CampaignSendErrors, opts)
}

// MetricSendsFailed is the sends that ended Failed (CampaignSendsFailed).
func (x *Campaigns) MetricSendsFailed(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return x.metric(metrics.FunctionCampaignSend, metrics.CampaignSendsFailed, opts)
}

// MetricSendsSkipped is the fires that sent nothing: a task already done,
// cancelled, suppressed or outside its windows (CampaignSendsSkipped).
func (x *Campaigns) MetricSendsSkipped(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return x.metric(metrics.FunctionCampaignSend, metrics.CampaignSendsSkipped, opts)
}

// MetricSchedulesCreated is the schedules provisioning created or found
// (CampaignSchedulesCreated).
func (x *Campaigns) MetricSchedulesCreated(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return x.metric(metrics.FunctionCampaignProvision, metrics.CampaignSchedulesCreated, opts)
}

// MetricProvisionThrottles is provisioning's throttled CreateSchedule
// calls, each backed off and retried (CampaignProvisionThrottles): a
// steady value says SchedulerCallsPerSecond is above the account's quota.
func (x *Campaigns) MetricProvisionThrottles(opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return x.metric(metrics.FunctionCampaignProvision, metrics.CampaignProvisionThrottles, opts)
}
