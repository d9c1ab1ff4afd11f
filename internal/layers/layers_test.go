package layers

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]Name{"": EventBridgeScheduler, "scheduler": EventBridgeScheduler,
		"stepfunctions": StepFunctions, "StepFunctions": StepFunctions, "ttl": TTL, "TTL": TTL} {
		if got, err := Parse(in); err != nil || got != want {
			t.Fatalf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := Parse("cron"); err == nil || !strings.Contains(err.Error(), "StepFunctions") {
		t.Fatalf("Parse(cron): %v; want an error naming the layers", err)
	}
}

func TestExecutionNameIsStablePerItemAndDue(t *testing.T) {
	due := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b := ExecutionName("task-01J", due), ExecutionName("task-01J", due.Add(time.Second))
	if a != "task-01J-1798761600" || a == b || b != "task-01J-1798761601" {
		t.Fatalf("names %q %q", a, b)
	}
	for _, n := range []string{ExecutionName(strings.Repeat("x", 80), due), RestartName(ExecutionName(strings.Repeat("x", 64), due), due),
		RestartName(ExecutionName(strings.Repeat("x", 80), due), due)} {
		if len(n) > MaxExecutionName {
			t.Fatalf("name %q (%d characters) not fitted", n, len(n))
		}
	}
	if r := RestartName(a, due); r != "task-01J-1798761600-r1798761600" {
		t.Fatalf("restart name %q", r)
	}
}

func TestHorizonAndLateness(t *testing.T) {
	now := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if err := CheckHorizon(now.Add(MaxHorizon), now); err != nil {
		t.Fatal(err)
	}
	if err := CheckHorizon(now.Add(MaxHorizon+time.Second), now); !errors.Is(err, ErrBeyondHorizon) {
		t.Fatalf("%v; want ErrBeyondHorizon", err)
	}
	if err := CheckLateness(time.Hour); err == nil || !strings.Contains(err.Error(), "48h") {
		t.Fatalf("%v; want a refusal naming the bound", err)
	}
	if err := CheckLateness(72 * time.Hour); err != nil {
		t.Fatal(err)
	}
}
