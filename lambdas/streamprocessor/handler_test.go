package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/cancel"
	"github.com/unschedule/unschedule/internal/core/envvars"
	"github.com/unschedule/unschedule/internal/core/metrics"
	"github.com/unschedule/unschedule/internal/core/timer/timertest"
	"github.com/unschedule/unschedule/internal/tooling/testfixture"
)

func fixture(t *testing.T, name string) events.DynamoDBEvent {
	return testfixture.Load[events.DynamoDBEvent](t, name)
}

type fakeQueue struct {
	sent   []cancel.Message
	reject map[string]bool // by event id
}

func (q *fakeQueue) Enqueue(_ context.Context, msgs []cancel.Message) ([]cancel.Failed, error) {
	var failed []cancel.Failed
	for _, m := range msgs {
		if q.reject[m.EventID] {
			failed = append(failed, cancel.Failed{Message: m, Err: errors.New("rejected")})
			continue
		}
		q.sent = append(q.sent, m)
	}
	return failed, nil
}

func TestHandle(t *testing.T) {
	tests := []struct {
		name         string
		reject       map[string]bool
		wantSent     []string // "action itemId"
		wantFailures []string // sequence numbers
	}{
		{"every transition decided, the rest skipped", nil,
			[]string{"cancel 01JD00000000000000000000AA", "reschedule 01JD00000000000000000000BB", "cancel 01JD00000000000000000000DD",
				"schedule 01JD00000000000000000000EE"}, nil},
		{"a rejected message fails its record by sequence number", map[string]bool{"ev-move": true},
			[]string{"cancel 01JD00000000000000000000AA", "cancel 01JD00000000000000000000DD", "schedule 01JD00000000000000000000EE"}, []string{"400"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := &fakeQueue{reject: tt.reject}
			var out bytes.Buffer
			rec := metrics.New(FunctionName, &out)
			log := slog.New(slog.DiscardHandler)
			proc, err := cancel.NewProcessor(timertest.Schema, q, rec, log)
			if err != nil {
				t.Fatal(err)
			}
			h := &handler{schema: timertest.Schema, proc: proc, metrics: rec, log: log}
			resp, err := h.handle(context.Background(), fixture(t, "batch.json"))
			if err != nil {
				t.Fatal(err)
			}
			var sent []string
			for _, m := range q.sent {
				sent = append(sent, string(m.Action)+" "+m.Sort)
				if m.Partition == "" || m.EventID == "" {
					t.Errorf("message %+v lacks its owner or event id", m)
				}
				if m.Action == cancel.ActionReschedule &&
					(!m.DueAt.Equal(time.Date(2030, 1, 4, 0, 0, 0, 0, time.UTC)) || m.Token != "tok-b") {
					t.Errorf("reschedule %+v, want the new due time and the item's token", m)
				}
			}
			if !slices.Equal(sent, tt.wantSent) {
				t.Errorf("sent %v, want %v", sent, tt.wantSent)
			}
			var failures []string
			for _, f := range resp.BatchItemFailures {
				failures = append(failures, f.ItemIdentifier)
			}
			if !slices.Equal(failures, tt.wantFailures) {
				t.Errorf("batch item failures %v, want %v", failures, tt.wantFailures)
			}
			if !strings.Contains(out.String(), `"MalformedRecords":1`) {
				t.Errorf("metrics %s lack MalformedRecords=1 (metrics are flushed once per invocation)", out.String())
			}
		})
	}
}

// A table keyed otherwise than the schema says never fails silently:
// every record of it is counted as malformed (and alarmed), none is sent.
func TestHandleCountsRecordsOfAnotherSchema(t *testing.T) {
	consumer := contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt",
		ArmedStates: []string{"Queued"}, FiredState: "Done", ScheduleNamePrefix: "job-"}.WithDefaults()
	q := &fakeQueue{}
	var out bytes.Buffer
	rec := metrics.New(FunctionName, &out)
	log := slog.New(slog.DiscardHandler)
	proc, err := cancel.NewProcessor(consumer, q, rec, log)
	if err != nil {
		t.Fatal(err)
	}
	ev := fixture(t, "batch.json")
	resp, err := (&handler{schema: consumer, proc: proc, metrics: rec, log: log}).handle(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) != 0 || len(q.sent) != 0 {
		t.Fatalf("resp %+v, err %v, sent %+v; want nothing sent, nothing failed", resp, err, q.sent)
	}
	if want := fmt.Sprintf(`"MalformedRecords":%d`, len(ev.Records)); !strings.Contains(out.String(), want) {
		t.Errorf("metrics %s lack %s", out.String(), want)
	}
}

// An adopter's own items (its schema's ReservedSortKeyPrefix) are skipped
// before decoding: a keys-only REMOVE of one, which would decode as the
// removal of an armed item, sends no cancellation; the adopter's jobs and
// a schema without the prefix are handled as before.
func TestHandleSkipsTheSchemasReservedKeys(t *testing.T) {
	keysOnly := func(id, tenant, job string) events.DynamoDBEventRecord {
		return events.DynamoDBEventRecord{EventID: id, EventName: "REMOVE", Change: events.DynamoDBStreamRecord{
			Keys:           map[string]events.DynamoDBAttributeValue{"tenantId": events.NewStringAttribute(tenant), "jobId": events.NewStringAttribute(job)},
			SequenceNumber: id, StreamViewType: "KEYS_ONLY"}}
	}
	ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		keysOnly("1", "t1", "meta#quota"), keysOnly("2", "t1", "job-1"), keysOnly("3", "t2", "meta#")}}
	tests := []struct {
		name     string
		prefix   string
		wantSent []string // "action sortKey"
	}{
		{"reserved prefix", "meta#", []string{"cancel job-1"}},
		{"no reserved prefix", "", []string{"cancel meta#quota", "cancel job-1", "cancel meta#"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt", ArmedStates: []string{"Queued"},
				FiredState: "Done", ScheduleNamePrefix: "job-", ReservedSortKeyPrefix: tt.prefix}.WithDefaults()
			q := &fakeQueue{}
			var out bytes.Buffer
			rec := metrics.New(FunctionName, &out)
			log := slog.New(slog.DiscardHandler)
			proc, err := cancel.NewProcessor(schema, q, rec, log)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := (&handler{schema: schema, proc: proc, metrics: rec, log: log}).handle(context.Background(), ev)
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("resp %+v, err %v; want no failure", resp, err)
			}
			var sent []string
			for _, m := range q.sent {
				sent = append(sent, string(m.Action)+" "+m.Sort)
			}
			if !slices.Equal(sent, tt.wantSent) {
				t.Errorf("sent %v, want %v", sent, tt.wantSent)
			}
			if strings.Contains(out.String(), `"MalformedRecords"`) && !strings.Contains(out.String(), `"MalformedRecords":0`) {
				t.Errorf("metrics %s count a malformed record: a reserved key is skipped, not malformed", out.String())
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	consumer := contract.Schema{PartitionKey: "tenantId", SortKey: "jobId", DueAttr: "runAt",
		ArmedStates: []string{"Queued"}, FiredState: "Done", ScheduleNamePrefix: "job-"}.WithDefaults()
	tests := []struct {
		name    string
		env     map[string]string
		want    config
		wantErr string
	}{
		{"set", map[string]string{envvars.QueueURL: "https://sqs/q.fifo", contract.EnvVar: timertest.Schema.EnvValue()},
			config{QueueURL: "https://sqs/q.fifo", Schema: timertest.Schema}, ""},
		{"no schema", map[string]string{envvars.QueueURL: "https://sqs/q.fifo"}, config{}, contract.EnvVar + " is not set"},
		{"consumer schema", map[string]string{envvars.QueueURL: "https://sqs/q.fifo", contract.EnvVar: consumer.EnvValue()},
			config{QueueURL: "https://sqs/q.fifo", Schema: consumer}, ""},
		{"missing", nil, config{}, envvars.QueueURL},
		{"bad schema", map[string]string{envvars.QueueURL: "q", contract.EnvVar: `{"firedState":"Pending"}`}, config{}, contract.EnvVar},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadConfig(func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("loadConfig = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
