package metrics

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/core/envvars"
)

func TestFlushWritesEMF(t *testing.T) {
	for _, tc := range []struct {
		name   string
		record func(r *Recorder)
		want   map[string]float64
	}{
		{"nothing", func(*Recorder) {}, nil},
		{"counts add", func(r *Recorder) { r.Add("Cancelled", 1); r.Add("Cancelled", 2) }, map[string]float64{"Cancelled": 3}},
		{"set replaces", func(r *Recorder) { r.Set("LagSeconds", 5, "Seconds"); r.Set("LagSeconds", 7, "Seconds") }, map[string]float64{"LagSeconds": 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			t.Setenv(envvars.MetricsStack, "Unschedule-dev")
			r := New("expiry", &buf)
			r.now = func() time.Time { return time.UnixMilli(1700000000000) }
			tc.record(r)
			if err := r.Flush(); err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if buf.Len() != 0 {
					t.Fatalf("wrote %q, want nothing", buf.String())
				}
				return
			}
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("not JSON: %v: %s", err, buf.String())
			}
			aws := got["_aws"].(map[string]any)
			if aws["Timestamp"].(float64) != 1700000000000 {
				t.Fatalf("timestamp %v", aws["Timestamp"])
			}
			cwm := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
			if cwm["Namespace"] != Namespace {
				t.Fatalf("namespace %v", cwm["Namespace"])
			}
			if len(cwm["Metrics"].([]any)) != len(tc.want) {
				t.Fatalf("metrics %v", cwm["Metrics"])
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("%s = %v, want %v", k, got[k], v)
				}
			}
			if got["Function"] != "expiry" || got["Stack"] != "Unschedule-dev" {
				t.Fatalf("Function = %v, Stack = %v", got["Function"], got["Stack"])
			}
			dims, _ := json.Marshal(cwm["Dimensions"])
			if string(dims) != `[["Stack","Function"]]` {
				t.Fatalf("Dimensions = %s, want [[\"Stack\",\"Function\"]]: alarms match on both", dims)
			}
		})
	}
}
