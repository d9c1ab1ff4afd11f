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
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// maxExamples bounds the marker keys one run logs.
const maxExamples = 20

// watcher scans the table for markers once per run.
type watcher struct {
	api         dynamodb.ScanAPIClient
	cfg         ttlmarker.Config
	maxLateness time.Duration
	now         func() time.Time
	log         *slog.Logger
	metrics     *metrics.Recorder
}

// Run scans every marker (a Scan reads the whole table: its cost is the
// table's size, once per run) and sets TTLOverdueMarkers and
// TTLOldestMarkerAgeSeconds; it logs the keys of up to maxExamples
// overdue markers.
func (w *watcher) Run(ctx context.Context) error {
	now := w.now()
	pages := dynamodb.NewScanPaginator(w.api, &dynamodb.ScanInput{
		TableName:                aws.String(w.cfg.Table),
		FilterExpression:         aws.String("begins_with(#pk, :prefix) AND attribute_exists(#ttl)"),
		ProjectionExpression:     aws.String("#pk, #ttl"),
		ExpressionAttributeNames: map[string]string{"#pk": w.cfg.Schema.PartitionKey, "#ttl": w.cfg.TTLAttr},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":prefix": &types.AttributeValueMemberS{Value: timerspec.MarkerKeyPrefix},
		},
	})
	var overdue, markers int
	var oldest time.Duration
	var examples []string
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("ttlwatch: scan %s: %w", w.cfg.Table, err)
		}
		for _, item := range page.Items {
			n, ok := item[w.cfg.TTLAttr].(*types.AttributeValueMemberN)
			expiry, err := strconv.ParseInt(valueOf(n, ok), 10, 64)
			if err != nil {
				w.log.Warn("marker without a numeric TTL attribute", "table", w.cfg.Table, "key", keyOf(item, w.cfg.Schema.PartitionKey), "attribute", w.cfg.TTLAttr)
				continue
			}
			markers++
			age := now.Sub(time.Unix(expiry, 0))
			oldest = max(oldest, age)
			if age > w.maxLateness {
				overdue++
				if len(examples) < maxExamples {
					examples = append(examples, keyOf(item, w.cfg.Schema.PartitionKey))
				}
			}
		}
	}
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

func keyOf(item map[string]types.AttributeValue, pk string) string {
	if s, ok := item[pk].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}
