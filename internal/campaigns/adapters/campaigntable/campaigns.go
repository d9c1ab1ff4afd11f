// Package campaigntable is the DynamoDB adapter of the campaign table:
// CampaignStore keeps campaigns, their send tasks and the provisioning
// checkpoints in one DynamoDB table (layout:
// internal/campaigns/tablekeys). Every state change is a conditional
// write: Claim moves Pending → Running only if the task is Pending;
// Replace writes only if the stored task still has the previous state and
// attempt; SetStatus only from the allowed statuses. A refused condition
// is campaign.ErrConditionFailed, a missing item campaign.ErrNotFound.
// StreamSendTask reads a send task from the table's stream with the
// store's own decoding, and CampaignTableInput declares the table for
// tests and a local run. It is built on the core's DynamoDB helpers
// (internal/core/adapters/dynamo).
package campaigntable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/campaigns/provision"
	tk "github.com/unschedule/unschedule/internal/campaigns/tablekeys"
	"github.com/unschedule/unschedule/internal/core/adapters/dynamo"
	"github.com/unschedule/unschedule/internal/core/clock"
)

// CampaignStore implements the campaign ports on the campaign table.
type CampaignStore struct {
	api   dynamo.API
	table string
}

var (
	_ campaign.Tasks        = (*CampaignStore)(nil)
	_ campaign.Campaigns    = (*CampaignStore)(nil)
	_ provision.Checkpoints = (*CampaignStore)(nil)
)

// NewCampaignStore returns a CampaignStore on the named table.
func NewCampaignStore(api dynamo.API, name string) (*CampaignStore, error) {
	if api == nil || name == "" {
		return nil, errors.New("dynamo: NewCampaignStore needs a DynamoDB client and a table name")
	}
	return &CampaignStore{api, name}, nil
}

// Get implements campaign.Tasks (a consistent read).
func (st *CampaignStore) Get(ctx context.Context, k campaign.Key) (campaign.SendTask, error) {
	out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: taskKey(k), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return campaign.SendTask{}, fmt.Errorf("get task %s: %w", k.TaskID, err)
	}
	if out.Item == nil {
		return campaign.SendTask{}, fmt.Errorf("task %s: %w", k.TaskID, campaign.ErrNotFound)
	}
	return unmarshalTask(out.Item)
}

// Claim implements campaign.Tasks: the contract's claim
// (campaign.TaskSchema.Claim: Pending at sendAt = due → Running,
// firedAt and claimedAt = now), with the task's own changes in the same
// UpdateItem as its ClaimOptions (claimChanges: leaseUntil, updatedAt,
// attempt + 1).
func (st *CampaignStore) Claim(ctx context.Context, k campaign.Key, due, now time.Time, lease time.Duration) (campaign.SendTask, error) {
	now = now.UTC().Truncate(time.Second)
	u := campaign.TaskSchema.Claim(campaign.ItemKey(k), contract.FormatTime(due), now, claimChanges(now, lease))
	t, err := st.claimWrite(ctx, u)
	if err != nil {
		return t, fmt.Errorf("claim task %s: %w", k.TaskID, err)
	}
	return t, nil
}

// TakeOver implements campaign.Tasks: the contract's take-over
// (campaign.TaskSchema.TakeOver: Running for due, not sent, claimed at
// least lease ago → claimedAt = now), with the task's own changes as
// Claim's.
func (st *CampaignStore) TakeOver(ctx context.Context, k campaign.Key, due, now time.Time, lease time.Duration) (campaign.SendTask, error) {
	now = now.UTC().Truncate(time.Second)
	u := campaign.TaskSchema.TakeOver(campaign.ItemKey(k), contract.FormatTime(due), now, lease, claimChanges(now, lease))
	t, err := st.claimWrite(ctx, u)
	if err != nil {
		return t, fmt.Errorf("take over task %s: %w", k.TaskID, err)
	}
	return t, nil
}

// claimChanges are the task's own changes in a claim or take-over: the
// lease (leaseUntil = now + lease), updatedAt = now and attempt + 1.
func claimChanges(now time.Time, lease time.Duration) contract.ClaimOptions {
	return contract.ClaimOptions{
		AlsoSet: map[string]string{"leaseUntil": now.Add(lease).Format(time.RFC3339Nano), "updatedAt": now.Format(time.RFC3339Nano)},
		Add:     map[string]int64{attrAttempt: 1},
	}
}

// claimWrite sends a contract claim or take-over and decodes the task it
// leaves.
func (st *CampaignStore) claimWrite(ctx context.Context, u contract.Update) (campaign.SendTask, error) {
	out, err := st.api.UpdateItem(ctx, dynamo.UpdateInput(st.table, u, types.ReturnValueAllNew))
	if err != nil {
		return campaign.SendTask{}, dynamo.ConditionAs(err, campaign.ErrConditionFailed)
	}
	return unmarshalTask(out.Attributes)
}

// Replace implements campaign.Tasks: a put of next conditioned on the
// stored state and attempt being prev's. A move into a terminal state is
// then settled (see settle): the campaign is Completed by the write that
// records its last open task.
func (st *CampaignStore) Replace(ctx context.Context, prev, next campaign.SendTask) error {
	if prev.Key() != next.Key() {
		return fmt.Errorf("replace task %s with %s: the keys differ", prev.ID, next.ID)
	}
	_, err := st.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(st.table), Item: marshalTask(next),
		ConditionExpression:       aws.String("#s = :s AND #a = :a"),
		ExpressionAttributeNames:  map[string]string{"#s": attrState, "#a": attrAttempt},
		ExpressionAttributeValues: dynamo.Item{":s": dynamo.S(string(prev.State)), ":a": dynamo.N(prev.Attempt)},
	})
	if err != nil {
		return fmt.Errorf("replace task %s: %w", prev.ID, dynamo.ConditionAs(err, campaign.ErrConditionFailed))
	}
	if prev.State.Terminal() || !next.State.Terminal() {
		return nil
	}
	if err := st.settle(ctx, next.CampaignID, next.Index, next.UpdatedAt); err != nil {
		return fmt.Errorf("task %s is %s, but: %w", next.ID, next.State, err)
	}
	return nil
}

// settle records that the index-th task of a campaign is terminal and
// completes the campaign when every task is, in two conditional writes
// that are safe to repeat under at-least-once delivery:
//
//  1. ADD the index to the campaign's DONE number set (adding it again
//     changes nothing, unlike a counter), reading the set's size back;
//  2. when the size reaches the campaign's total, move it Provisioning
//     or Active → Completed, conditioned on that status and on
//     total <= size; a refused condition means it is Completed already
//     (or Cancelled, or Draft), and is no error.
//
// The set only grows and a task never leaves a terminal state, so the
// write that adds the last index sees the full size: whichever task ends
// last completes the campaign, exactly once. A Provisioning campaign is
// completed too: provisioning's own move to Active is then refused and
// ignored. If the second write is lost (a crash between the two), GET
// /campaigns/{id} completes it (campaignapi).
func (st *CampaignStore) settle(ctx context.Context, campaignID string, index int, now time.Time) error {
	out, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(st.table), Key: dynamo.Item{tk.PartitionKey: dynamo.S(tk.CampaignPK(campaignID)), tk.SortKey: dynamo.S(tk.DoneSK)},
		UpdateExpression:          aws.String("ADD #d :i"),
		ExpressionAttributeNames:  map[string]string{"#d": tk.DoneAttr},
		ExpressionAttributeValues: dynamo.Item{":i": &types.AttributeValueMemberNS{Value: []string{strconv.Itoa(index)}}},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return fmt.Errorf("record campaign %s progress: %w", campaignID, err)
	}
	done, _ := out.Attributes[tk.DoneAttr].(*types.AttributeValueMemberNS)
	if done == nil {
		return fmt.Errorf("record campaign %s progress: no %s set came back", campaignID, tk.DoneAttr)
	}
	_, err = st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(st.table), Key: campaignKey(campaignID),
		UpdateExpression:         aws.String("SET #st = :completed, updatedAt = :now"),
		ConditionExpression:      aws.String("#st IN (:provisioning, :active) AND #total <= :n"),
		ExpressionAttributeNames: map[string]string{"#st": attrStatus, "#total": "total"},
		ExpressionAttributeValues: dynamo.Item{":completed": dynamo.S(string(campaign.Completed)), ":now": dynamo.S(now.UTC().Format(time.RFC3339Nano)),
			":provisioning": dynamo.S(string(campaign.Provisioning)), ":active": dynamo.S(string(campaign.Active)), ":n": dynamo.N(len(done.Value))},
	})
	if err != nil && !errors.Is(dynamo.ConditionAs(err, campaign.ErrConditionFailed), campaign.ErrConditionFailed) {
		return fmt.Errorf("complete campaign %s: %w", campaignID, err)
	}
	return nil
}

// List implements campaign.Tasks: a consistent Query of the campaign's
// partition from the from-th task's sort key on (task ids sort by index).
func (st *CampaignStore) List(ctx context.Context, campaignID string, from, limit int) ([]campaign.SendTask, error) {
	if from < 0 || limit < 1 {
		return nil, fmt.Errorf("list tasks of %s: from %d, limit %d: want from >= 0 and limit >= 1", campaignID, from, limit)
	}
	var out []campaign.SendTask
	in := &dynamodb.QueryInput{
		TableName: aws.String(st.table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: dynamo.Item{":pk": dynamo.S(tk.CampaignPK(campaignID)), ":from": dynamo.S(tk.TaskSK(campaign.TaskID(campaignID, from))), ":to": dynamo.S(tk.TaskPrefix + campaignID + "-~")},
		Limit:                     aws.Int32(int32(limit)),
	}
	err := dynamo.QueryPages(ctx, st.api, in, func(res *dynamodb.QueryOutput) (bool, error) {
		page, err := dynamo.DecodeAll(res.Items, unmarshalTask)
		out = append(out, page...)
		in.Limit = aws.Int32(int32(limit - len(out)))
		return len(out) < limit, err
	})
	if err != nil {
		return nil, fmt.Errorf("list tasks of %s: %w", campaignID, err)
	}
	return out, nil
}

// Open implements campaign.Tasks: one page of the sparse open index; the
// cursor is the page's last key, encoded.
func (st *CampaignStore) Open(ctx context.Context, cursor string, limit int) ([]campaign.SendTask, string, error) {
	res, err := st.indexPage(ctx, tk.OpenIndex, tk.OpenAttr, tk.OpenValue, cursor, limit, true)
	if err != nil {
		return nil, "", fmt.Errorf("read open tasks: %w", err)
	}
	out, err := dynamo.DecodeAll(res.Items, unmarshalTask)
	return out, dynamo.EncodeKeyCursor(res.LastEvaluatedKey), err
}

// indexPage reads one page of index's partition attr = value (forward:
// in sort key order, else the reverse), from cursor (decodeCursor; the
// index's sort attributes besides the table's keys are sortAttrs).
func (st *CampaignStore) indexPage(ctx context.Context, index, attr, value, cursor string, limit int, forward bool, sortAttrs ...string) (*dynamodb.QueryOutput, error) {
	start, err := decodeCursor(cursor, attr, value, sortAttrs...)
	if err != nil {
		return nil, err
	}
	return st.api.Query(ctx, &dynamodb.QueryInput{
		TableName: aws.String(st.table), IndexName: aws.String(index),
		KeyConditionExpression:    aws.String("#o = :o"),
		ExpressionAttributeNames:  map[string]string{"#o": attr},
		ExpressionAttributeValues: dynamo.Item{":o": dynamo.S(value)},
		ScanIndexForward:          aws.Bool(forward), Limit: aws.Int32(int32(max(limit, 1))), ExclusiveStartKey: start,
	})
}

// decodeCursor reads a cursor of an index whose partition attribute is
// part with value want. A cursor that is not one this index returns (a
// forged or damaged one: other attributes, another partition such as
// another owner's) is campaign.ErrBadCursor, never a start key that
// DynamoDB refuses with a ValidationException (a 500) or that reads
// another partition.
func decodeCursor(c, part, want string, sortAttrs ...string) (dynamo.Item, error) {
	if c == "" {
		return nil, nil
	}
	m, err := dynamo.DecodeKeyCursor(c)
	if err == nil && (len(m) != 3+len(sortAttrs) || m[part] != want || m[tk.PartitionKey] == "" || m[tk.SortKey] == "") {
		err = errors.New("not a key of this index")
	}
	for _, a := range sortAttrs {
		if err == nil && m[a] == "" {
			err = errors.New("not a key of this index")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cursor %q: %w (%w)", c, campaign.ErrBadCursor, err)
	}
	return dynamo.ToAttrs(m), nil
}

// Campaign implements campaign.Campaigns.
func (st *CampaignStore) Campaign(ctx context.Context, id string) (campaign.Campaign, error) {
	out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), Key: campaignKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return campaign.Campaign{}, fmt.Errorf("get campaign %s: %w", id, err)
	}
	if out.Item == nil {
		return campaign.Campaign{}, fmt.Errorf("campaign %s: %w", id, campaign.ErrNotFound)
	}
	return unmarshalCampaign(out.Item)
}

// SetStatus implements campaign.Campaigns: an update conditioned on the
// status being one of from.
func (st *CampaignStore) SetStatus(ctx context.Context, id string, from []campaign.Status, to campaign.Status, reason string, now time.Time) error {
	if len(from) == 0 {
		return fmt.Errorf("set campaign %s status: no status to move from", id)
	}
	vals := dynamo.Item{":to": dynamo.S(string(to)), ":now": dynamo.S(now.UTC().Format(time.RFC3339Nano))}
	cond := "#st IN ("
	for i, f := range from {
		k := ":f" + strconv.Itoa(i)
		vals[k] = dynamo.S(string(f))
		if i > 0 {
			cond += ", "
		}
		cond += k
	}
	update := "SET #st = :to, updatedAt = :now"
	if reason != "" {
		update += ", cancelReason = :r"
		vals[":r"] = dynamo.S(reason)
	}
	_, err := st.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(st.table), Key: campaignKey(id),
		UpdateExpression: aws.String(update), ConditionExpression: aws.String(cond + ")"),
		ExpressionAttributeNames: map[string]string{"#st": attrStatus}, ExpressionAttributeValues: vals,
	})
	if err != nil {
		return fmt.Errorf("set campaign %s status %s: %w", id, to, dynamo.ConditionAs(err, campaign.ErrConditionFailed))
	}
	return nil
}

// Owned reads one page of owner's campaigns, newest first, from the
// owner index: summaries (id, subject, status, total, created and
// updated), without body or rules. The cursor is opaque; "" starts, a
// returned "" ends.
func (st *CampaignStore) Owned(ctx context.Context, owner, cursor string, limit int) ([]campaign.Campaign, string, error) {
	res, err := st.indexPage(ctx, tk.OwnerIndex, tk.OwnerAttr, owner, cursor, limit, false, tk.CreatedAttr)
	if err != nil {
		return nil, "", fmt.Errorf("list campaigns of %s: %w", owner, err)
	}
	out, err := dynamo.DecodeAll(res.Items, func(m dynamo.Item) (campaign.Campaign, error) {
		r := &dynamo.Reader{Item: m}
		c := campaign.Campaign{ID: dynamo.GetS(m, attrCampaignID), OwnerID: owner, Subject: dynamo.GetS(m, "subject"),
			Status: campaign.Status(dynamo.GetS(m, attrStatus)), Total: r.N("total"), CreatedAt: r.Time(tk.CreatedAttr), UpdatedAt: r.Time("updatedAt")}
		return c, r.Err
	})
	return out, dynamo.EncodeKeyCursor(res.LastEvaluatedKey), err
}

// ErrCampaignExists: a campaign of that id exists already.
var ErrCampaignExists = errors.New("campaign exists")

// Create writes a new campaign, then its tasks in batches. The campaign
// item goes first, conditioned on the id being new (ErrCampaignExists); a create
// that fails midway leaves a Draft campaign with fewer than Total tasks,
// which Complete reports and provisioning must refuse.
func (st *CampaignStore) Create(ctx context.Context, c campaign.Campaign, tasks []campaign.SendTask) error {
	m, err := marshalCampaign(c)
	if err != nil {
		return err
	}
	_, err = st.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.table), Item: m,
		ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if err != nil {
		if errors.Is(dynamo.ConditionAs(err, campaign.ErrConditionFailed), campaign.ErrConditionFailed) {
			return fmt.Errorf("create campaign %s: %w", c.ID, ErrCampaignExists)
		}
		return fmt.Errorf("create campaign %s: %w", c.ID, err)
	}
	// CampaignCreateWriters batches in flight: 10,000 tasks are 400 batches.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, CampaignCreateWriters)
	errs := make(chan error, 1)
	var wg sync.WaitGroup
	for i := 0; i < len(tasks) && ctx.Err() == nil; i += 25 {
		var reqs []types.WriteRequest
		for _, t := range tasks[i:min(i+25, len(tasks))] {
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: marshalTask(t)}})
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := st.batch(ctx, reqs); err != nil {
				select {
				case errs <- fmt.Errorf("create campaign %s: tasks from %d: %w", c.ID, i, err):
				default:
				}
				cancel()
			}
		})
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
		return ctx.Err()
	}
}

// CampaignCreateWriters is how many task batches Create writes at once.
const CampaignCreateWriters = 8

// batch writes reqs, retrying the unprocessed ones with a growing pause.
func (st *CampaignStore) batch(ctx context.Context, reqs []types.WriteRequest) error {
	for try := 0; len(reqs) > 0; try++ {
		if try > 0 {
			if try > 8 {
				return fmt.Errorf("%d writes still unprocessed after %d tries", len(reqs), try)
			}
			if err := (clock.System{}).Sleep(ctx, time.Duration(25<<try)*time.Millisecond); err != nil {
				return err
			}
		}
		out, err := st.api.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{st.table: reqs}})
		if err != nil {
			return err
		}
		reqs = out.UnprocessedItems[st.table]
	}
	return nil
}

// Complete reports whether every task of c was written (the last one
// exists): a create that failed midway is not.
func (st *CampaignStore) Complete(ctx context.Context, c campaign.Campaign) (bool, error) {
	if c.Total == 0 {
		return true, nil
	}
	_, err := st.Get(ctx, campaign.Key{CampaignID: c.ID, TaskID: campaign.TaskID(c.ID, c.Total-1)})
	if errors.Is(err, campaign.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Counts counts a campaign's tasks by state (a consistent Query that
// returns only the state: about 1 read unit per 4 KB of items read).
func (st *CampaignStore) Counts(ctx context.Context, campaignID string) (map[campaign.State]int, error) {
	counts := map[campaign.State]int{}
	err := dynamo.QueryPages(ctx, st.api, &dynamodb.QueryInput{
		TableName: aws.String(st.table), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :pk AND begins_with(sk, :t)"),
		ProjectionExpression:      aws.String("#s"),
		ExpressionAttributeNames:  map[string]string{"#s": attrState},
		ExpressionAttributeValues: dynamo.Item{":pk": dynamo.S(tk.CampaignPK(campaignID)), ":t": dynamo.S(tk.TaskPrefix)},
	}, func(res *dynamodb.QueryOutput) (bool, error) {
		for _, m := range res.Items {
			counts[campaign.State(dynamo.GetS(m, attrState))]++
		}
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("count tasks of %s: %w", campaignID, err)
	}
	return counts, nil
}

// Load implements provision.Checkpoints (a consistent read; the zero
// checkpoint when none was saved).
func (st *CampaignStore) Load(ctx context.Context, campaignID string) (provision.Checkpoint, error) {
	out, err := st.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(st.table), ConsistentRead: aws.Bool(true),
		Key: dynamo.Item{tk.PartitionKey: dynamo.S(tk.CampaignPK(campaignID)), tk.SortKey: dynamo.S(tk.CheckpointSK)}})
	if err != nil {
		return provision.Checkpoint{}, fmt.Errorf("load checkpoint of %s: %w", campaignID, err)
	}
	cp := provision.Checkpoint{CampaignID: campaignID}
	if out.Item == nil {
		return cp, nil
	}
	r := &dynamo.Reader{Item: out.Item}
	cp.Next, cp.Created, cp.Errors, cp.Runs = r.N("next"), r.N("created"), r.N("errors"), r.N("runs")
	cp.Done, cp.UpdatedAt = dynamo.GetS(out.Item, "done") == "true", r.Time("updatedAt")
	return cp, r.Err
}

// Save implements provision.Checkpoints. The checkpoint item has no
// state, so it never enters the open index.
func (st *CampaignStore) Save(ctx context.Context, cp provision.Checkpoint) error {
	m := dynamo.Item{tk.PartitionKey: dynamo.S(tk.CampaignPK(cp.CampaignID)), tk.SortKey: dynamo.S(tk.CheckpointSK),
		"next": dynamo.N(cp.Next), "created": dynamo.N(cp.Created), "errors": dynamo.N(cp.Errors), "runs": dynamo.N(cp.Runs),
		"done": dynamo.S(strconv.FormatBool(cp.Done))}
	dynamo.PutTime(m, "updatedAt", cp.UpdatedAt)
	if _, err := st.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(st.table), Item: m}); err != nil {
		return fmt.Errorf("save checkpoint of %s: %w", cp.CampaignID, err)
	}
	return nil
}
