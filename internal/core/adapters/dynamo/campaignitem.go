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

func taskKey(k campaign.Key) Item {
	return Item{tk.PartitionKey: S(tk.CampaignPK(k.CampaignID)), tk.SortKey: S(tk.TaskSK(k.TaskID))}
}

func campaignKey(id string) Item {
	return Item{tk.PartitionKey: S(tk.CampaignPK(id)), tk.SortKey: S(tk.MetaSK)}
}

// open reports whether a task belongs in the sparse open index.
func openState(st campaign.State) bool { return st == campaign.Pending || st == campaign.Running }

func marshalTask(t campaign.SendTask) Item {
	m := taskKey(t.Key())
	m[attrCampaignID], m[attrTaskID] = S(t.CampaignID), S(t.ID)
	m["index"] = N(t.Index)
	m[attrState] = S(string(t.State))
	m[attrAttempt] = N(t.Attempt)
	if openState(t.State) {
		m[tk.OpenAttr] = S(tk.OpenValue)
	}
	PutS(m, "email", t.Email)
	PutS(m, "subject", t.Subject)
	PutTime(m, "sendAt", t.SendAt)
	PutS(m, "local", t.Local)
	PutS(m, "timeZone", t.TimeZone)
	PutS(m, "schedulerRequestToken", t.SchedulerRequestToken)
	PutN(m, "retimed", t.Retimed)
	PutTime(m, "claimedAt", t.ClaimedAt)
	PutTime(m, "leaseUntil", t.LeaseUntil)
	PutTime(m, "sentAt", t.SentAt)
	PutS(m, "messageId", t.MessageID)
	PutS(m, "error", t.Error)
	PutS(m, "reason", t.Reason)
	PutTime(m, "updatedAt", t.UpdatedAt)
	return m
}

func unmarshalTask(m Item) (campaign.SendTask, error) {
	r := &Reader{Item: m}
	t := campaign.SendTask{
		CampaignID: GetS(m, attrCampaignID), ID: GetS(m, attrTaskID), Index: r.N("index"),
		Email: GetS(m, "email"), Subject: GetS(m, "subject"),
		SendAt: r.Time("sendAt"), Local: GetS(m, "local"), TimeZone: GetS(m, "timeZone"),
		State: campaign.State(GetS(m, attrState)), SchedulerRequestToken: GetS(m, "schedulerRequestToken"),
		Attempt: r.N(attrAttempt), Retimed: r.N("retimed"),
		ClaimedAt: r.Time("claimedAt"), LeaseUntil: r.Time("leaseUntil"), SentAt: r.Time("sentAt"),
		MessageID: GetS(m, "messageId"), Error: GetS(m, "error"), Reason: GetS(m, "reason"),
		UpdatedAt: r.Time("updatedAt"),
	}
	if r.Err == nil && (t.CampaignID == "" || t.ID == "" || t.State == "") {
		r.Err = fmt.Errorf("task item %s/%s lacks campaignId, taskId or state", GetS(m, tk.PartitionKey), GetS(m, tk.SortKey))
	}
	return t, r.Err
}

func marshalCampaign(c campaign.Campaign) (Item, error) {
	rules, err := json.Marshal(c.Rules)
	if err != nil {
		return nil, fmt.Errorf("encode rules: %w", err)
	}
	m := campaignKey(c.ID)
	m[attrCampaignID] = S(c.ID)
	m[tk.OwnerAttr] = S(c.OwnerID)
	m["subject"], m["body"], m["rules"] = S(c.Subject), S(c.Body), S(string(rules))
	m[attrStatus] = S(string(c.Status))
	m["total"] = N(c.Total)
	PutTime(m, tk.CreatedAttr, c.CreatedAt)
	PutTime(m, "updatedAt", c.UpdatedAt)
	PutS(m, "cancelReason", c.CancelReason)
	return m, nil
}

func unmarshalCampaign(m Item) (campaign.Campaign, error) {
	r := &Reader{Item: m}
	c := campaign.Campaign{ID: GetS(m, attrCampaignID), OwnerID: GetS(m, tk.OwnerAttr), Subject: GetS(m, "subject"),
		Body: GetS(m, "body"), Status: campaign.Status(GetS(m, attrStatus)), Total: r.N("total"),
		CreatedAt: r.Time(tk.CreatedAttr), UpdatedAt: r.Time("updatedAt"), CancelReason: GetS(m, "cancelReason")}
	if r.Err != nil {
		return c, r.Err
	}
	var rules plan.Rules
	if err := json.Unmarshal([]byte(GetS(m, "rules")), &rules); err != nil {
		return c, fmt.Errorf("campaign %s: decode rules: %w", c.ID, err)
	}
	c.Rules = rules
	return c, nil
}
