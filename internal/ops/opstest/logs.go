package opstest

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs/types"
)

// Logs stands in for CloudWatch Logs Insights: it answers a query with
// Lines, once polled Polls times, and records the query.
type Logs struct {
	Lines [][]types.ResultField
	Polls int
	Query cloudwatchlogs.StartQueryInput
	polls int
}

// Line is one result row of the fields the history reads.
func Line(ts, group, level, msg, raw string) []types.ResultField {
	f := func(k, v string) types.ResultField {
		return types.ResultField{Field: aws.String(k), Value: aws.String(v)}
	}
	return []types.ResultField{f("@timestamp", ts), f("@log", "123456789012:"+group), f("level", level), f("msg", msg), f("@message", raw)}
}

// StartQuery records the query.
func (l *Logs) StartQuery(_ context.Context, in *cloudwatchlogs.StartQueryInput, _ ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.StartQueryOutput, error) {
	l.Query = *in
	return &cloudwatchlogs.StartQueryOutput{QueryId: aws.String("q-1")}, nil
}

// GetQueryResults is Running Polls times, then Complete with the Lines
// whose raw line holds the filtered key.
func (l *Logs) GetQueryResults(context.Context, *cloudwatchlogs.GetQueryResultsInput, ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.GetQueryResultsOutput, error) {
	if l.polls < l.Polls {
		l.polls++
		return &cloudwatchlogs.GetQueryResultsOutput{Status: types.QueryStatusRunning}, nil
	}
	var rows [][]types.ResultField
	for _, r := range l.Lines {
		if strings.Contains(aws.ToString(l.Query.QueryString), "= "+keyOf(r)) {
			rows = append(rows, r)
		}
	}
	return &cloudwatchlogs.GetQueryResultsOutput{Status: types.QueryStatusComplete, Results: rows}, nil
}

// keyOf is the "key" field of a row's raw JSON line.
func keyOf(r []types.ResultField) string {
	raw := aws.ToString(r[4].Value)
	i := strings.Index(raw, `"key":"`)
	if i < 0 {
		return "\x00"
	}
	rest := raw[i+7:]
	return `"` + rest[:strings.Index(rest, `"`)] + `"`
}
