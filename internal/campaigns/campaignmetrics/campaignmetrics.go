// Package campaignmetrics names the scheduled campaigns' own metrics and
// functions (constructs/campaigns), beside their code; the core's are in
// internal/core/metrics, whose Recorder writes both.
package campaignmetrics

// Campaign function names (the Function dimension).
const (
	FunctionCampaignAPI        = "campaignapi"
	FunctionCampaignProvision  = "campaignprovision"
	FunctionCampaignSend       = "campaignsend"
	FunctionCampaignReconciler = "campaignreconciler"
	FunctionCampaignProgress   = "campaignprogress"
)

// Campaign API (FunctionCampaignAPI).
const (
	// CampaignApiServerErrors counts the campaign API's 5xx answers.
	CampaignApiServerErrors = "CampaignApiServerErrors"
)

// Provisioning (FunctionCampaignProvision), per run.
const (
	// CampaignSchedulesCreated counts schedules created (or found).
	CampaignSchedulesCreated = "CampaignSchedulesCreated"
	// CampaignProvisionThrottles counts throttled CreateSchedule calls
	// (retried after a back-off, never dropped).
	CampaignProvisionThrottles = "CampaignProvisionThrottles"
	// CampaignProvisionContinued counts runs that stopped at their time
	// limit and re-invoked themselves.
	CampaignProvisionContinued = "CampaignProvisionContinued"
	// CampaignProvisionLeft counts tasks whose schedule kept failing and
	// is left to the reconciler.
	CampaignProvisionLeft = "CampaignProvisionLeft"
	// CampaignProvisionErrors counts runs that failed (retried by Lambda,
	// then its failure queue) or could not re-invoke themselves.
	CampaignProvisionErrors = "CampaignProvisionErrors"
)

// Send worker (FunctionCampaignSend), per fire.
const (
	CampaignSendsSent    = "CampaignSendsSent"
	CampaignSendsSkipped = "CampaignSendsSkipped"
	// CampaignSendsFailed counts tasks written Failed (SES refused the
	// message, or an earlier attempt's outcome is unknown).
	CampaignSendsFailed = "CampaignSendsFailed"
	// CampaignSendErrors counts fires that returned an error (retried by
	// the scheduler, then Lambda, then the failure queue; the reconciler
	// repairs the task).
	CampaignSendErrors = "CampaignSendErrors"
	// CampaignSendBadInput counts fires whose event could not be read.
	CampaignSendBadInput = "CampaignSendBadInput"
)

// Reconciler (FunctionCampaignReconciler), per pass.
const (
	CampaignReconcileRecreated = "CampaignReconcileRecreated"
	// CampaignReconcileRecovered counts stale Running tasks finished or
	// re-queued.
	CampaignReconcileRecovered = "CampaignReconcileRecovered"
	// CampaignReconcileFailed counts tasks given up (Failed with a reason).
	CampaignReconcileFailed = "CampaignReconcileFailed"
	// CampaignReconcilerErrors counts tasks a pass could not repair, and
	// failed passes.
	CampaignReconcilerErrors = "CampaignReconcilerErrors"
)

// Live progress (FunctionCampaignProgress), per stream batch.
const (
	// CampaignProgressAnnounced counts the campaigns announced: their
	// Progress published to AWS AppSync Events (or skipped, for a campaign
	// that no longer exists).
	CampaignProgressAnnounced = "CampaignProgressAnnounced"
	// CampaignProgressErrors counts campaigns whose announce failed (the
	// read or the publish): their records are reported as batch item
	// failures and retried.
	CampaignProgressErrors = "CampaignProgressErrors"
	// CampaignProgressMalformed counts stream records that do not decode
	// (skipped: a retry cannot read them either).
	CampaignProgressMalformed = "CampaignProgressMalformed"
)

// CampaignErrorMetrics lists, per campaign function, every metric that
// counts work lost, skipped or failing; constructs/campaigns alarms on
// each (and is an operations Source for them). They are kept out of the
// core's metrics.ErrorMetrics, which the operations construct alarms on by
// default: an app without the campaigns has none of these functions.
var CampaignErrorMetrics = map[string][]string{
	FunctionCampaignAPI:        {CampaignApiServerErrors},
	FunctionCampaignProvision:  {CampaignProvisionErrors, CampaignProvisionLeft},
	FunctionCampaignSend:       {CampaignSendErrors, CampaignSendBadInput, CampaignSendsFailed},
	FunctionCampaignReconciler: {CampaignReconcilerErrors, CampaignReconcileFailed},
	FunctionCampaignProgress:   {CampaignProgressErrors, CampaignProgressMalformed},
}
