package campaignlambda

import (
	"context"
	"log/slog"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// ReconcileMargin: a pass stops this long before the invocation's
// deadline, its checkpoint saved.
const ReconcileMargin = 60 * time.Second

// Reconcile runs one pass of the core reconciler over the send tasks
// (campaign.NewReconciler, the campaign's rules) per invocation (the
// 30-minute rule), its budget the invocation's time less a margin. The
// checkpoint (Ports.Checkpoints) carries a pass over to the next
// invocation.
type Reconcile struct {
	// Config's Budget is set per invocation; the rest is passed on.
	Config reconcile.Config
	// Rules are the campaign's repair rules (limits; the ports are set
	// from Ports).
	Rules   campaign.Repair
	Ports   campaign.ReconcilePorts
	Metrics Recorder
	Log     *slog.Logger
}

// Handle is the Lambda handler; the rule's event is ignored.
func (r *Reconcile) Handle(ctx context.Context) error {
	defer flush(ctx, r.Metrics, r.Log)
	d, err := deadline(ctx)
	if err != nil {
		return err
	}
	if r.Ports.Log == nil {
		r.Ports.Log = r.Log
	}
	cfg := r.Config
	cfg.Budget = max(time.Second, d.Sub(r.Ports.Clock.Now())-ReconcileMargin)
	rules := r.Rules
	rec, err := campaign.NewReconciler(cfg, &rules, r.Ports)
	if err != nil {
		r.Metrics.Add(campaignmetrics.CampaignReconcilerErrors, 1)
		return err
	}
	res, err := rec.Run(ctx)
	n := rules.Counts()
	r.Metrics.Add(campaignmetrics.CampaignReconcileRecreated, float64(res.SchedulesCreated))
	r.Metrics.Add(campaignmetrics.CampaignReconcileRecovered, float64(n.Finished+n.Requeued))
	r.Metrics.Add(campaignmetrics.CampaignReconcileFailed, float64(n.Failed))
	r.Metrics.Add(campaignmetrics.CampaignReconcilerErrors, float64(res.Errors))
	log := r.Log.With("checked", res.ItemsChecked, "recreated", res.SchedulesCreated, "dispatched", res.ItemsFired,
		"retimed", n.Retimed, "finished", n.Finished, "requeued", n.Requeued, "failed", n.Failed, "cancelled", n.Cancelled, "senderRemoved", n.SenderRemoved,
		"errors", res.Errors, "schedulerCalls", res.SchedulerCalls, "leftOver", res.LeftOver, "completed", res.Completed)
	if err != nil {
		r.Metrics.Add(campaignmetrics.CampaignReconcilerErrors, 1)
		log.ErrorContext(ctx, "reconcile pass failed", "error", err.Error())
		return err
	}
	log.InfoContext(ctx, "reconcile pass done")
	return nil
}
