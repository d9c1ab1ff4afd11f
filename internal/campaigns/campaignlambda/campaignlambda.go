// Package campaignlambda is the body of the campaign functions' handlers,
// between the Lambda events and the campaign services: the event in, the
// service call, the metrics and logs, and what to return so Lambda
// retries only what a retry can fix. The mains in lambdas/campaign* wire
// the AWS adapters into it; no AWS SDK call here.
package campaignlambda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/campaignapi"
	"github.com/unschedule/unschedule/internal/campaigns/campaignmetrics"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	"github.com/unschedule/unschedule/internal/campaigns/send"
	// The kinds whose events Invoke decodes: a kind without a decoder
	// (Scheduler, Step Functions) hands over the payload itself, and is
	// not linked, so the function links no SDK client it never calls.
	_ "github.com/unschedule/unschedule/internal/core/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/core/timerkind"
)

// Recorder writes metrics (metrics.Recorder).
type Recorder interface {
	Add(name string, n float64)
	Flush() error
}

// ProvisionEvent is the provisioning function's event.
type ProvisionEvent struct {
	CampaignID string `json:"campaignId"`
}

// Starter queues a provisioning run (an asynchronous invoke).
type Starter interface {
	Start(ctx context.Context, campaignID string) error
}

// deadline is the invocation's deadline (Lambda sets it on the context).
func deadline(ctx context.Context) (time.Time, error) {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Time{}, errors.New("the context has no deadline: run under Lambda, or give the context one")
	}
	return d, nil
}

func flush(ctx context.Context, m Recorder, log *slog.Logger) {
	if err := m.Flush(); err != nil {
		log.ErrorContext(ctx, "write metrics", "error", err.Error())
	}
}

// Provision runs provisioning for one event and, when the run stopped at
// its time limit (its checkpoint saved), re-invokes its own function.
type Provision struct {
	Provisioner *provision.Provisioner
	Self        Starter
	Metrics     Recorder
	Log         *slog.Logger
}

// Handle is the Lambda handler. An error makes Lambda retry the event:
// the run resumes from the checkpoint.
func (p *Provision) Handle(ctx context.Context, e ProvisionEvent) error {
	defer flush(ctx, p.Metrics, p.Log)
	if e.CampaignID == "" {
		p.Log.ErrorContext(ctx, "provision event without campaignId: dropped")
		p.Metrics.Add(campaignmetrics.CampaignProvisionErrors, 1)
		return nil // a retry cannot add the id
	}
	d, err := deadline(ctx)
	if err != nil {
		return err
	}
	res, err := p.Provisioner.Run(ctx, e.CampaignID, d)
	p.Metrics.Add(campaignmetrics.CampaignProvisionThrottles, float64(res.Throttles))
	if err != nil {
		p.Metrics.Add(campaignmetrics.CampaignProvisionErrors, 1)
		p.Log.ErrorContext(ctx, "provision run failed", logfield.Key, campaign.CampaignItemKey(e.CampaignID).String(),
			"campaignId", e.CampaignID, "error", err.Error())
		return err
	}
	log := p.Log.With(logfield.Key, campaign.CampaignItemKey(e.CampaignID).String(), "campaignId", e.CampaignID, "next", res.Next, "created", res.Created, "left", res.Errors,
		"runs", res.Runs, "calls", res.Calls, "throttles", res.Throttles)
	if res.Continue {
		p.Metrics.Add(campaignmetrics.CampaignProvisionContinued, 1)
		if err := p.Self.Start(ctx, e.CampaignID); err != nil {
			p.Metrics.Add(campaignmetrics.CampaignProvisionErrors, 1)
			log.ErrorContext(ctx, "re-invoke failed: Lambda retries this event, which resumes from the checkpoint", "error", err.Error())
			return fmt.Errorf("provision %s: re-invoke: %w", e.CampaignID, err)
		}
		log.InfoContext(ctx, "provision run stopped at its time limit; re-invoked")
		return nil
	}
	if res.Done {
		p.Metrics.Add(campaignmetrics.CampaignSchedulesCreated, float64(res.Created))
		p.Metrics.Add(campaignmetrics.CampaignProvisionLeft, float64(res.Errors))
	}
	log.InfoContext(ctx, "provision run done")
	return nil
}

// Send runs the send worker for one fire: the core timer's (a schedule,
// an execution, a marker's TTL deletion), or the reconciler's dispatch.
type Send struct {
	Worker  *send.Worker
	Metrics Recorder
	Log     *slog.Logger
}

// Invoke is the function's entry point for every core timer. The
// EventBridge Scheduler and Step Functions timers (and the reconciler)
// hand it one fire (Handle). The TTL timer's event source mapping hands
// it a batch of stream records, filtered to TTL deletions of markers:
// each marker's payload goes through the same Handle; a failed one is
// reported as a batch item failure, and the rest of its shard waits for
// it (the mapping has ReportBatchItemFailures).
func (s *Send) Invoke(ctx context.Context, raw json.RawMessage) (any, error) {
	return timerkind.Invoke(ctx, raw, s.Handle, nil)
}

// Handle runs one fire: the core timers' payload (TaskSchema) or the
// older {"campaignId","taskId"} (campaign.DecodeFire). It returns an
// error only when a retry may help (the worker's rule); an unreadable
// event is dropped with a metric, since no retry can read it.
func (s *Send) Handle(ctx context.Context, raw json.RawMessage) error {
	defer flush(ctx, s.Metrics, s.Log)
	e, err := campaign.DecodeFire(raw)
	if err != nil {
		s.Metrics.Add(campaignmetrics.CampaignSendBadInput, 1)
		s.Log.ErrorContext(ctx, "unreadable fire event: dropped", "error", err.Error())
		return nil
	}
	out, err := s.Worker.Handle(ctx, e)
	log := s.Log.With(logfield.Key, campaign.ItemKey(campaign.Key{CampaignID: e.CampaignID, TaskID: e.TaskID}).String(),
		"campaignId", e.CampaignID, "taskId", e.TaskID, "outcome", string(out))
	switch out {
	case send.Sent:
		s.Metrics.Add(campaignmetrics.CampaignSendsSent, 1)
	case send.FailedSend:
		s.Metrics.Add(campaignmetrics.CampaignSendsFailed, 1)
	case send.Skipped, send.OutsideWindow, send.Cancelled, send.Suppressed:
		s.Metrics.Add(campaignmetrics.CampaignSendsSkipped, 1)
	}
	if err != nil {
		s.Metrics.Add(campaignmetrics.CampaignSendErrors, 1)
		log.ErrorContext(ctx, "send failed; retried", "error", err.Error())
		return err
	}
	log.InfoContext(ctx, "send handled")
	return nil
}

// API serves the campaign routes behind API Gateway.
type API struct {
	Handler *campaignapi.Handler
	Metrics Recorder
	Log     *slog.Logger
}

// Handle is the Lambda handler: a REST API proxy event in, its response
// out; a 5xx is counted (a client's mistake is never one).
func (a *API) Handle(ctx context.Context, e events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	defer flush(ctx, a.Metrics, a.Log)
	resp := a.Handler.ServeAPIGateway(ctx, e)
	if resp.StatusCode >= 500 {
		a.Metrics.Add(campaignmetrics.CampaignApiServerErrors, 1)
	}
	return resp, nil
}
