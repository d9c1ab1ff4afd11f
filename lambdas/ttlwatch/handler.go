package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/internal/core/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/core/logfield"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// maxExamples bounds the marker keys one run logs.
const maxExamples = 20

// API is the part of the DynamoDB client the watch uses.
type API interface {
	dynamodb.ScanAPIClient
	dynamodb.QueryAPIClient
}

// watcher lists the expired markers once per run.
type watcher struct {
	api         API
	cfg         ttlmarker.Config
	maxLateness time.Duration
	now         func() time.Time
	log         *slog.Logger
	metrics     *metrics.Recorder
}

// Run reads the expired markers and sets TTLOverdueMarkers and
// TTLOldestMarkerAgeSeconds; it logs the keys of up to maxExamples
// overdue markers. With the armed index (cfg.Index) it Queries the
// markers due by now, in time order: its cost is the markers DynamoDB has
// not deleted yet. Without one it scans every marker (a Scan reads the
// whole table: its cost is the table's size, once per run).
func (w *watcher) Run(ctx context.Context) error {
	if w.cfg.Index != "" {
		return w.runIndexed(ctx)
	}
	now := w.now()
	pages := dynamodb.NewScanPaginator(w.api, &dynamodb.ScanInput{
		TableName:            aws.String(w.cfg.Table),
		FilterExpression:     aws.String("begins_with(#pk, :prefix) AND attribute_exists(#ttl)"),
		ProjectionExpression: aws.String("#pk, #ttl, #p"),
		ExpressionAttributeNames: map[string]string{"#pk": w.cfg.Schema.PartitionKey, "#ttl": w.cfg.TTLAttr,
			"#p": timerspec.MarkerPayloadAttr},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":prefix": &types.AttributeValueMemberS{Value: timerspec.MarkerKeyPrefix},
		},
	})
	t := &tally{w: w}
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("ttlwatch: scan %s: %w", w.cfg.Table, err)
		}
		for _, item := range page.Items {
			n, ok := item[w.cfg.TTLAttr].(*types.AttributeValueMemberN)
			expiry, err := strconv.ParseInt(valueOf(n, ok), 10, 64)
			if err != nil {
				w.log.Warn("marker without a numeric TTL attribute", append(w.itemAttrs(item), "table", w.cfg.Table, "attribute", w.cfg.TTLAttr)...)
				continue
			}
			t.add(item, now.Sub(time.Unix(expiry, 0)))
		}
	}
	return w.report(t)
}

// tally counts markers by age.
type tally struct {
	w                *watcher
	markers, overdue int
	oldest           time.Duration
	examples         []string
}

func (t *tally) add(item map[string]types.AttributeValue, age time.Duration) {
	t.markers++
	t.oldest = max(t.oldest, age)
	if age > t.w.maxLateness {
		t.overdue++
		if len(t.examples) < maxExamples {
			t.examples = append(t.examples, keyOf(item, t.w.cfg.Schema.PartitionKey))
		}
	}
}

// runIndexed Queries the markers' partition of the armed index up to now:
// the index holds each marker's time as its due attribute (the TTL
// attribute, that time rounded up, is not projected).
func (w *watcher) runIndexed(ctx context.Context) error {
	now := w.now()
	t := &tally{w: w}
	pages := dynamodb.NewQueryPaginator(w.api, ttlmarker.MarkerQuery(w.cfg, now, nil, 0))
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("ttlwatch: query index %s of %s: %w", w.cfg.Index, w.cfg.Table, err)
		}
		for _, item := range page.Items {
			due, ok := item[w.cfg.Schema.DueAttr].(*types.AttributeValueMemberS)
			at, err := time.Parse(time.RFC3339, valueOfS(due, ok))
			if err != nil {
				w.log.Warn("marker without a time", append(w.itemAttrs(item), "table", w.cfg.Table, "attribute", w.cfg.Schema.DueAttr)...)
				continue
			}
			t.add(item, now.Sub(at))
		}
	}
	return w.report(t)
}

func valueOfS(s *types.AttributeValueMemberS, ok bool) string {
	if !ok || s == nil {
		return ""
	}
	return s.Value
}

// report sets the metrics and logs the tally.
func (w *watcher) report(t *tally) error {
	overdue, oldest, examples, markers := t.overdue, t.oldest, t.examples, t.markers
	w.metrics.Set(metrics.TTLOverdueMarkers, float64(overdue), "Count")
	w.metrics.Set(metrics.TTLOldestMarkerAgeSeconds, oldest.Seconds(), "Seconds")
	if overdue > 0 {
		w.log.Error("markers overdue beyond MaxLateness: check that TTL is enabled on the attribute",
			"table", w.cfg.Table, "attribute", w.cfg.TTLAttr, "overdue", overdue, "maxLateness", w.maxLateness.String(),
			"oldestAge", oldest.Round(time.Second).String(), "keys", examples)
		return nil
	}
	w.log.Info("no marker overdue", "table", w.cfg.Table, "markers", markers, "oldestAge", oldest.Round(time.Second).String())
	return nil
}

func valueOf(n *types.AttributeValueMemberN, ok bool) string {
	if !ok || n == nil {
		return ""
	}
	return n.Value
}

// itemAttrs name a marker in a log line: its own key ("marker") and,
// when its payload reads, its item's key in logfield.Key, the spelling
// unschedule why --logs queries.
func (w *watcher) itemAttrs(item map[string]types.AttributeValue) []any {
	attrs := []any{"marker", keyOf(item, w.cfg.Schema.PartitionKey)}
	if p, ok := item[timerspec.MarkerPayloadAttr].(*types.AttributeValueMemberS); ok {
		if pl, err := w.cfg.Schema.DecodePayload([]byte(p.Value)); err == nil {
			attrs = append(attrs, logfield.Key, pl.Key.String())
		}
	}
	return attrs
}

func keyOf(item map[string]types.AttributeValue, pk string) string {
	if s, ok := item[pk].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
