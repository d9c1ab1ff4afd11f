package dynamo

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/campaign"
	"github.com/unschedule/unschedule/internal/campaign/plan"
	tk "github.com/unschedule/unschedule/internal/campaign/tablekeys"
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

type item = map[string]types.AttributeValue

func avS(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func avN(v int) types.AttributeValue    { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }

// putS, putN and putT leave out empty values (a smaller item, and absent
// means zero on the way back).
func putS(m item, k, v string) {
	if v != "" {
		m[k] = avS(v)
	}
}
func putN(m item, k string, v int) {
	if v != 0 {
		m[k] = avN(v)
	}
}
func putT(m item, k string, t time.Time) {
	if !t.IsZero() {
		m[k] = avS(t.UTC().Format(time.RFC3339Nano))
	}
}

func getS(m item, k string) string {
	if v, ok := m[k].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// getN and getT report a damaged value instead of reading it as zero.
func getN(m item, k string) (int, error) {
	v, ok := m[k].(*types.AttributeValueMemberN)
	if !ok {
		return 0, nil
	}
	i, err := strconv.Atoi(v.Value)
	if err != nil {
		return 0, fmt.Errorf("attribute %s = %q is not a whole number: %w", k, v.Value, err)
	}
	return i, nil
}
func getT(m item, k string) (time.Time, error) {
	v := getS(m, k)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("attribute %s = %q is not RFC 3339: %w", k, v, err)
	}
	return t, nil
}

// attrReader collects the first decode error.
type attrReader struct {
	m   item
	err error
}

func (r *attrReader) n(k string) int {
	v, err := getN(r.m, k)
	if r.err == nil {
		r.err = err
	}
	return v
}
func (r *attrReader) t(k string) time.Time {
	v, err := getT(r.m, k)
	if r.err == nil {
		r.err = err
	}
	return v
}

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
