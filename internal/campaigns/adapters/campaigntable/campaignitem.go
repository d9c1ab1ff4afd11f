package campaigntable

import (
	"encoding/json"
	"fmt"

	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/plan"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
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

func taskKey(k campaign.Key) dynamo.Item {
	return dynamo.Item{tk.PartitionKey: dynamo.S(tk.CampaignPK(k.CampaignID)), tk.SortKey: dynamo.S(tk.TaskSK(k.TaskID))}
}

func campaignKey(id string) dynamo.Item {
	return dynamo.Item{tk.PartitionKey: dynamo.S(tk.CampaignPK(id)), tk.SortKey: dynamo.S(tk.MetaSK)}
}

// open reports whether a task belongs in the sparse open index.
func openState(st campaign.State) bool { return st == campaign.Pending || st == campaign.Running }

func marshalTask(t campaign.SendTask) dynamo.Item {
	m := taskKey(t.Key())
	m[attrCampaignID], m[attrTaskID] = dynamo.S(t.CampaignID), dynamo.S(t.ID)
	m["index"] = dynamo.N(t.Index)
	m[attrState] = dynamo.S(string(t.State))
	m[attrAttempt] = dynamo.N(t.Attempt)
	if openState(t.State) {
		m[tk.OpenAttr] = dynamo.S(tk.OpenValue)
	}
	dynamo.PutS(m, "email", t.Email)
	dynamo.PutS(m, "subject", t.Subject)
	dynamo.PutTime(m, "sendAt", t.SendAt)
	dynamo.PutS(m, "local", t.Local)
	dynamo.PutS(m, "timeZone", t.TimeZone)
	dynamo.PutS(m, "schedulerRequestToken", t.SchedulerRequestToken)
	dynamo.PutN(m, "retimed", t.Retimed)
	dynamo.PutTime(m, "claimedAt", t.ClaimedAt)
	dynamo.PutTime(m, "leaseUntil", t.LeaseUntil)
	dynamo.PutTime(m, "sentAt", t.SentAt)
	dynamo.PutS(m, "messageId", t.MessageID)
	dynamo.PutS(m, "error", t.Error)
	dynamo.PutS(m, "reason", t.Reason)
	dynamo.PutTime(m, "updatedAt", t.UpdatedAt)
	return m
}

func unmarshalTask(m dynamo.Item) (campaign.SendTask, error) {
	r := &dynamo.Reader{Item: m}
	t := campaign.SendTask{
		CampaignID: dynamo.GetS(m, attrCampaignID), ID: dynamo.GetS(m, attrTaskID), Index: r.N("index"),
		Email: dynamo.GetS(m, "email"), Subject: dynamo.GetS(m, "subject"),
		SendAt: r.Time("sendAt"), Local: dynamo.GetS(m, "local"), TimeZone: dynamo.GetS(m, "timeZone"),
		State: campaign.State(dynamo.GetS(m, attrState)), SchedulerRequestToken: dynamo.GetS(m, "schedulerRequestToken"),
		Attempt: r.N(attrAttempt), Retimed: r.N("retimed"),
		ClaimedAt: r.Time("claimedAt"), LeaseUntil: r.Time("leaseUntil"), SentAt: r.Time("sentAt"),
		MessageID: dynamo.GetS(m, "messageId"), Error: dynamo.GetS(m, "error"), Reason: dynamo.GetS(m, "reason"),
		UpdatedAt: r.Time("updatedAt"),
	}
	if r.Err == nil && (t.CampaignID == "" || t.ID == "" || t.State == "") {
		r.Err = fmt.Errorf("task item %s/%s lacks campaignId, taskId or state", dynamo.GetS(m, tk.PartitionKey), dynamo.GetS(m, tk.SortKey))
	}
	return t, r.Err
}

func marshalCampaign(c campaign.Campaign) (dynamo.Item, error) {
	rules, err := json.Marshal(c.Rules)
	if err != nil {
		return nil, fmt.Errorf("encode rules: %w", err)
	}
	m := campaignKey(c.ID)
	m[attrCampaignID] = dynamo.S(c.ID)
	m[tk.OwnerAttr] = dynamo.S(c.OwnerID)
	m["subject"], m["body"], m["rules"] = dynamo.S(c.Subject), dynamo.S(c.Body), dynamo.S(string(rules))
	m[attrStatus] = dynamo.S(string(c.Status))
	m["total"] = dynamo.N(c.Total)
	dynamo.PutTime(m, tk.CreatedAttr, c.CreatedAt)
	dynamo.PutTime(m, "updatedAt", c.UpdatedAt)
	dynamo.PutS(m, "cancelReason", c.CancelReason)
	return m, nil
}

func unmarshalCampaign(m dynamo.Item) (campaign.Campaign, error) {
	r := &dynamo.Reader{Item: m}
	c := campaign.Campaign{ID: dynamo.GetS(m, attrCampaignID), OwnerID: dynamo.GetS(m, tk.OwnerAttr), Subject: dynamo.GetS(m, "subject"),
		Body: dynamo.GetS(m, "body"), Status: campaign.Status(dynamo.GetS(m, attrStatus)), Total: r.N("total"),
		CreatedAt: r.Time(tk.CreatedAttr), UpdatedAt: r.Time("updatedAt"), CancelReason: dynamo.GetS(m, "cancelReason")}
	if r.Err != nil {
		return c, r.Err
	}
	var rules plan.Rules
	if err := json.Unmarshal([]byte(dynamo.GetS(m, "rules")), &rules); err != nil {
		return c, fmt.Errorf("campaign %s: decode rules: %w", c.ID, err)
	}
	c.Rules = rules
	return c, nil
}
