package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/adapters/ttlmarker"
	"github.com/unschedule/unschedule/internal/core/logfield/logfieldtest"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/core/timerspec"
)

// fakeScan serves items one page each and records the input; its
// Query serves the same pages as the index's marker partition, keeping
// the items the key condition's "due <= :by" selects.
type fakeScan struct {
	pages [][]map[string]types.AttributeValue
	err   error
	in    *dynamodb.ScanInput
	query *dynamodb.QueryInput
}

func (f *fakeScan) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.query = in
	if f.err != nil {
		return nil, f.err
	}
	i := 0
	if in.ExclusiveStartKey != nil {
		i, _ = strconv.Atoi(in.ExclusiveStartKey["page"].(*types.AttributeValueMemberS).Value)
	}
	by := in.ExpressionAttributeValues[":by"].(*types.AttributeValueMemberS).Value
	out := &dynamodb.QueryOutput{}
	for _, it := range f.pages[i] {
		if it["dueAt"].(*types.AttributeValueMemberS).Value <= by {
			out.Items = append(out.Items, it)
		}
	}
	if i+1 < len(f.pages) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"page": &types.AttributeValueMemberS{Value: strconv.Itoa(i + 1)}}
	}
	return out, nil
}

func (f *fakeScan) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.in = in
	if f.err != nil {
		return nil, f.err
	}
	i := 0
	if in.ExclusiveStartKey != nil {
		i, _ = strconv.Atoi(in.ExclusiveStartKey["page"].(*types.AttributeValueMemberS).Value)
	}
	out := &dynamodb.ScanOutput{Items: f.pages[i]}
	if i+1 < len(f.pages) {
		out.LastEvaluatedKey = map[string]types.AttributeValue{"page": &types.AttributeValueMemberS{Value: strconv.Itoa(i + 1)}}
	}
	return out, nil
}

// marker is a marker as a Scan reads it (its TTL attribute) and as the
// index holds it (its state and time).
func marker(name string, expiry time.Time) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"tenantId":      &types.AttributeValueMemberS{Value: timerspec.MarkerKeyPrefix + name},
		"unscheduleTtl": &types.AttributeValueMemberN{Value: strconv.FormatInt(expiry.Unix(), 10)},
		"status":        &types.AttributeValueMemberS{Value: timerspec.MarkerState},
		"dueAt":         &types.AttributeValueMemberS{Value: contract.FormatTime(expiry)},
	}
}

// The watch measures each marker from its own expiry, whether it scans
// the table or Queries the armed index's marker partition (the expired
// markers only).
func TestRunMeasuresEachMarkerFromItsOwnExpiry(t *testing.T) {
	now := watchNow
	for _, tc := range []struct {
		name        string
		pages       [][]map[string]types.AttributeValue
		wantOverdue float64
		wantOldest  float64
		wantLog     string
	}{
		{"no markers", [][]map[string]types.AttributeValue{{}}, 0, 0, "no marker overdue"},
		{"future and recent markers only", [][]map[string]types.AttributeValue{{
			marker("a", now.Add(time.Hour)), marker("b", now.Add(-47*time.Hour)),
		}}, 0, (47 * time.Hour).Seconds(), "no marker overdue"},
		{"overdue markers across pages", [][]map[string]types.AttributeValue{
			{marker("a", now.Add(-49*time.Hour)), marker("b", now.Add(-time.Hour))},
			{marker("c", now.Add(-72*time.Hour))},
		}, 2, (72 * time.Hour).Seconds(), timerspec.MarkerKeyPrefix + "c"},
	} {
		for _, index := range []string{"", "armed"} {
			t.Run(tc.name+"/index "+index, func(t *testing.T) { runWatch(t, tc.pages, index, tc.wantOverdue, tc.wantOldest, tc.wantLog) })
		}
	}
}

var watchNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func runWatch(t *testing.T, pages [][]map[string]types.AttributeValue, index string, wantOverdue, wantOldest float64, wantLog string) {
	now, lateness := watchNow, 48*time.Hour
	var emf, logs bytes.Buffer
	api := &fakeScan{pages: pages}
	schema := contract.Schema{PartitionKey: "tenantId", SortKey: "jobId"}.WithDefaults()
	w := &watcher{api: api, cfg: ttlmarker.Config{Table: "T", TTLAttr: "unscheduleTtl", Schema: schema, Index: index},
		maxLateness: lateness, now: func() time.Time { return now },
		log: slog.New(slog.NewJSONHandler(&logs, nil)), metrics: metrics.NewForStack("S", metrics.FunctionTTLWatch, &emf)}
	if err := w.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := w.metrics.Flush(); err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(emf.Bytes(), &rec); err != nil {
		t.Fatalf("%v: %s", err, emf.String())
	}
	if rec[metrics.TTLOverdueMarkers] != wantOverdue || rec[metrics.TTLOldestMarkerAgeSeconds] != wantOldest {
		t.Fatalf("overdue %v oldest %v, want %v and %v", rec[metrics.TTLOverdueMarkers], rec[metrics.TTLOldestMarkerAgeSeconds], wantOverdue, wantOldest)
	}
	if !strings.Contains(logs.String(), wantLog) {
		t.Fatalf("logs %s lack %q", logs.String(), wantLog)
	}
	if index != "" {
		if api.in != nil || aws.ToString(api.query.IndexName) != index || aws.ToString(api.query.KeyConditionExpression) != "#s = :m AND #d <= :by" {
			t.Fatalf("scanned (%v), or queried %+v: want the index's marker partition", api.in != nil, api.query)
		}
		return
	}
	if got := aws.ToString(api.in.FilterExpression); !strings.Contains(got, "begins_with(#pk, :prefix)") || api.in.ExpressionAttributeNames["#pk"] != "tenantId" {
		t.Fatalf("scan filter %s %v, want markers only", got, api.in.ExpressionAttributeNames)
	}
}

func TestRunWrapsScanErrors(t *testing.T) {
	boom := errors.New("throttled")
	w := &watcher{api: &fakeScan{err: boom}, cfg: ttlmarker.Config{Table: "T", TTLAttr: "x", Schema: timertest.Schema},
		maxLateness: time.Hour, now: time.Now, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		metrics: metrics.NewForStack("S", metrics.FunctionTTLWatch, io.Discard)}
	if err := w.Run(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want it to wrap %v", err, boom)
	}
}

// TestMalformedMarkerLinesNameTheItem: the line about a marker the
// watch cannot measure carries its item's key (from the marker's
// payload) in logfield.Key, as unschedule why --logs queries it.
func TestMalformedMarkerLinesNameTheItem(t *testing.T) {
	schema := contract.Schema{PartitionKey: "tenantId", SortKey: "jobId"}.WithDefaults()
	payload := schema.EncodePayload(contract.Payload{Key: contract.Key{Partition: "shop-1", Sort: "job-9"}, Due: watchNow})
	bad := func(attr string, v types.AttributeValue) map[string]types.AttributeValue {
		m := marker("a", watchNow.Add(-time.Hour))
		m[timerspec.MarkerPayloadAttr] = &types.AttributeValueMemberS{Value: payload}
		m[attr] = v
		return m
	}
	for _, tc := range []struct {
		name, index, msg string
		item             map[string]types.AttributeValue
	}{
		{"a scanned marker with a TTL that is no number", "", "marker without a numeric TTL attribute",
			bad("unscheduleTtl", &types.AttributeValueMemberS{Value: "soon"})},
		{"an indexed marker without a time", "armed", "marker without a time", bad("dueAt", &types.AttributeValueMemberS{Value: ""})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, lines := logfieldtest.New()
			w := &watcher{api: &fakeScan{pages: [][]map[string]types.AttributeValue{{tc.item}}},
				cfg:         ttlmarker.Config{Table: "T", TTLAttr: "unscheduleTtl", Schema: schema, Index: tc.index},
				maxLateness: time.Hour, now: func() time.Time { return watchNow }, log: log,
				metrics: metrics.NewForStack("S", metrics.FunctionTTLWatch, io.Discard)}
			if err := w.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			lines.RequireKey(t, tc.msg, "shop-1/job-9")
		})
	}
}
