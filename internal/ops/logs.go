package ops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/campaigns/campaign"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/logfield"
)

// Logs is the part of the CloudWatch Logs client History uses.
type Logs interface {
	StartQuery(ctx context.Context, in *cloudwatchlogs.StartQueryInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.StartQueryOutput, error)
	GetQueryResults(ctx context.Context, in *cloudwatchlogs.GetQueryResultsInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.GetQueryResultsOutput, error)
}

// LogLine is one line of an item's history.
type LogLine struct {
	Time    string `json:"time"`
	Group   string `json:"group"`
	Level   string `json:"level,omitempty"`
	Message string `json:"message"`
	// Line is the whole JSON line.
	Line string `json:"line"`
}

// MaxHistory bounds the lines one history query returns.
const MaxHistory = 500

// maxGroups is how many log groups one Logs Insights query may read.
const maxGroups = 50

// historyQuery is the Logs Insights query of the lines about any of
// keys: the functions log an item's key in logfield.Key.
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax.html
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/CWL_QuerySyntax-Filter.html (or)
func historyQuery(keys ...string) string {
	q := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	var conds []string
	for _, k := range keys {
		conds = append(conds, fmt.Sprintf("%s = \"%s\"", logfield.Key, q.Replace(k)))
	}
	return fmt.Sprintf("fields @timestamp, @log, level, msg, @message | filter %s | sort @timestamp asc | limit %d",
		strings.Join(conds, " or "), MaxHistory)
}

// historyKeys are the keys whose lines tell k's history: its own, and
// for a campaign's send task its campaign's (campaign.CampaignItemKey:
// provisioning, a cancel), which the campaign functions log.
func historyKeys(k contract.Key, ts []Table) []string {
	keys := []string{k.String()}
	if ck, err := campaign.KeyOf(k); err == nil && slices.ContainsFunc(ts, func(t Table) bool { return t.Kind == KindCampaignSends }) {
		keys = append(keys, campaign.CampaignItemKey(ck.CampaignID).String())
	}
	return keys
}

// logGroups are the log groups of the functions that carry the schema
// of any of tables ts, name one, or are the target its firing invokes:
// the expiry, notify, stream processor, worker and reconciler (the
// campaign functions, for the campaign table; a dispatcher target).
func (w *World) logGroups(ts ...Table) []string {
	var out []string
	for _, f := range w.Stack.Functions {
		if slices.ContainsFunc(ts, func(t Table) bool {
			return f.Env[envvars.ItemSchema] == t.Schema.EnvValue() || slices.Contains(t.Functions, f.Name) || slices.Contains(t.Targets, f.Name)
		}) {
			out = append(out, f.LogGroup)
		}
	}
	sort.Strings(out)
	return out[:min(len(out), maxGroups)]
}

// History is what the functions logged about the item key of table t
// over the last since, oldest first, from CloudWatch Logs Insights.
func (w *World) History(ctx context.Context, table, key string, since time.Duration) ([]LogLine, error) {
	if w.Logs == nil {
		return nil, fmt.Errorf("%w: --logs reads CloudWatch Logs: give --stack", ErrUsage)
	}
	t, k, err := w.locate(ctx, table, key)
	ts := []Table{t}
	if errors.Is(err, ErrNoSuchKey) {
		// The item is gone from every table that could hold it: its
		// history is in the logs of any of them.
		ts = nil
		for _, name := range w.tablesFitting(key) {
			ft, _ := w.Stack.Table(name)
			ts = append(ts, ft)
		}
		if k, err = ParseKey(ts[0].Schema, key); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	groups := w.logGroups(ts...)
	if len(groups) == 0 {
		return nil, fmt.Errorf("no function of table %s has a log group", t.Name)
	}
	end := w.now()
	q, err := w.Logs.StartQuery(ctx, &cloudwatchlogs.StartQueryInput{LogGroupNames: groups,
		StartTime: aws.Int64(end.Add(-since).Unix()), EndTime: aws.Int64(end.Unix()), QueryString: aws.String(historyQuery(historyKeys(k, ts)...)),
		Limit: aws.Int32(MaxHistory)})
	if err != nil {
		return nil, fmt.Errorf("start the log query: %w", err)
	}
	for polls := 1; ; polls++ {
		r, err := w.Logs.GetQueryResults(ctx, &cloudwatchlogs.GetQueryResultsInput{QueryId: q.QueryId})
		if err != nil {
			return nil, fmt.Errorf("read the log query: %w", err)
		}
		switch r.Status {
		case types.QueryStatusComplete:
			return logLines(r.Results), nil
		case types.QueryStatusFailed, types.QueryStatusCancelled, types.QueryStatusTimeout:
			return nil, fmt.Errorf("the log query ended %s", r.Status)
		}
		w.progress(polls, 0, fmt.Sprintf("querying the logs (poll %d)", polls))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(w.pollEvery()):
		}
	}
}

func (w *World) pollEvery() time.Duration {
	if w.PollEvery > 0 {
		return w.PollEvery
	}
	return time.Second
}

func logLines(rows [][]types.ResultField) []LogLine {
	out := []LogLine{}
	for _, row := range rows {
		var l LogLine
		for _, f := range row {
			v := aws.ToString(f.Value)
			switch aws.ToString(f.Field) {
			case "@timestamp":
				l.Time = v
			case "@log":
				l.Group = v[strings.LastIndex(v, ":")+1:]
			case "level":
				l.Level = v
			case "msg":
				l.Message = v
			case "@message":
				l.Line = v
			}
		}
		out = append(out, l)
	}
	return out
}
