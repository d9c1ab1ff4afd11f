package dynamo

import (
	"encoding/json"
	"fmt"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
)

// Attribute names of the items (state is a DynamoDB reserved word: every
// expression aliases it).
const (
	attrState      = "state"
	attrAttempt    = "attempt"
	attrStatus     = "status"
	attrCampaignID = "campaignId"
	attrTaskID     = "taskId"
)

func taskKey(k campaign.Key) item {
	return item{tk.PartitionKey: avS(tk.CampaignPK(k.CampaignID)), tk.SortKey: avS(tk.TaskSK(k.TaskID))}
}

func campaignKey(id string) item {
	return item{tk.PartitionKey: avS(tk.CampaignPK(id)), tk.SortKey: avS(tk.MetaSK)}
}

// open reports whether a task belongs in the sparse open index.
func openState(st campaign.State) bool { return st == campaign.Pending || st == campaign.Running }

func marshalTask(t campaign.SendTask) item {
	m := taskKey(t.Key())
	m[attrCampaignID], m[attrTaskID] = avS(t.CampaignID), avS(t.ID)
	m["index"] = avN(t.Index)
	m[attrState] = avS(string(t.State))
	m[attrAttempt] = avN(t.Attempt)
	if openState(t.State) {
		m[tk.OpenAttr] = avS(tk.OpenValue)
	}
	putS(m, "email", t.Email)
	putS(m, "subject", t.Subject)
	putT(m, "sendAt", t.SendAt)
	putS(m, "local", t.Local)
	putS(m, "timeZone", t.TimeZone)
	putS(m, "schedulerRequestToken", t.SchedulerRequestToken)
	putN(m, "retimed", t.Retimed)
	putT(m, "claimedAt", t.ClaimedAt)
	putT(m, "leaseUntil", t.LeaseUntil)
	putT(m, "sentAt", t.SentAt)
	putS(m, "messageId", t.MessageID)
	putS(m, "error", t.Error)
	putS(m, "reason", t.Reason)
	putT(m, "updatedAt", t.UpdatedAt)
	return m
}

func unmarshalTask(m item) (campaign.SendTask, error) {
	r := &attrReader{m: m}
	t := campaign.SendTask{
		CampaignID: getS(m, attrCampaignID), ID: getS(m, attrTaskID), Index: r.n("index"),
		Email: getS(m, "email"), Subject: getS(m, "subject"),
		SendAt: r.t("sendAt"), Local: getS(m, "local"), TimeZone: getS(m, "timeZone"),
		State: campaign.State(getS(m, attrState)), SchedulerRequestToken: getS(m, "schedulerRequestToken"),
		Attempt: r.n(attrAttempt), Retimed: r.n("retimed"),
		ClaimedAt: r.t("claimedAt"), LeaseUntil: r.t("leaseUntil"), SentAt: r.t("sentAt"),
		MessageID: getS(m, "messageId"), Error: getS(m, "error"), Reason: getS(m, "reason"),
		UpdatedAt: r.t("updatedAt"),
	}
	if r.err == nil && (t.CampaignID == "" || t.ID == "" || t.State == "") {
		r.err = fmt.Errorf("task item %s/%s lacks campaignId, taskId or state", getS(m, tk.PartitionKey), getS(m, tk.SortKey))
	}
	return t, r.err
}

func marshalCampaign(c campaign.Campaign) (item, error) {
	rules, err := json.Marshal(c.Rules)
	if err != nil {
		return nil, fmt.Errorf("encode rules: %w", err)
	}
	m := campaignKey(c.ID)
	m[attrCampaignID] = avS(c.ID)
	m[tk.OwnerAttr] = avS(c.OwnerID)
	m["subject"], m["body"], m["rules"] = avS(c.Subject), avS(c.Body), avS(string(rules))
	m[attrStatus] = avS(string(c.Status))
	m["total"] = avN(c.Total)
	putT(m, tk.CreatedAttr, c.CreatedAt)
	putT(m, "updatedAt", c.UpdatedAt)
	putS(m, "cancelReason", c.CancelReason)
	return m, nil
}

func unmarshalCampaign(m item) (campaign.Campaign, error) {
	r := &attrReader{m: m}
	c := campaign.Campaign{ID: getS(m, attrCampaignID), OwnerID: getS(m, tk.OwnerAttr), Subject: getS(m, "subject"),
		Body: getS(m, "body"), Status: campaign.Status(getS(m, attrStatus)), Total: r.n("total"),
		CreatedAt: r.t(tk.CreatedAttr), UpdatedAt: r.t("updatedAt"), CancelReason: getS(m, "cancelReason")}
	if r.err != nil {
		return c, r.err
	}
	var rules plan.Rules
	if err := json.Unmarshal([]byte(getS(m, "rules")), &rules); err != nil {
		return c, fmt.Errorf("campaign %s: decode rules: %w", c.ID, err)
	}
	c.Rules = rules
	return c, nil
}
