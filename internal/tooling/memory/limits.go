package memory

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/campaigns/limits"
)

// SenderLimits is the senders' day counters in memory (limits.Counters:
// tests, the dev server). It is exactly as strict as the DynamoDB
// counters (limitsdynamo.Counters): the same all-or-none condition, a
// missing counter counts 0, an add whose By is over its Max is refused,
// and it forgets nothing (DynamoDB's TTL deletes a day only after it).
type SenderLimits struct {
	mu     sync.Mutex
	counts map[limits.Key]map[string]int64
}

var _ limits.Counters = (*SenderLimits)(nil)

// NewSenderLimits returns empty counters.
func NewSenderLimits() *SenderLimits {
	return &SenderLimits{counts: map[limits.Key]map[string]int64{}}
}

// Add implements limits.Counters.
func (m *SenderLimits) Add(_ context.Context, key limits.Key, _ time.Time, adds []limits.Add) (map[string]int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.counts[key]
	for _, a := range adds {
		// DynamoDB's condition: attribute_not_exists(n) OR n <= Max - By,
		// with By > Max refused before it is asked.
		if a.By > a.Max || cur[a.Counter] > a.Max-a.By {
			return maps.Clone(cur), false, nil
		}
	}
	if cur == nil {
		cur = map[string]int64{}
		m.counts[key] = cur
	}
	for _, a := range adds {
		cur[a.Counter] += a.By
	}
	return nil, true, nil
}

// Counts are key's current counters (tests).
func (m *SenderLimits) Counts(key limits.Key) map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.counts[key])
}

// dayJSON is one key's counters as MarshalJSON writes them.
type dayJSON struct {
	Key    limits.Key       `json:"key"`
	Counts map[string]int64 `json:"counts"`
}

// MarshalJSON writes every key's counters (make dev's saved state).
func (m *SenderLimits) MarshalJSON() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []dayJSON{}
	for k, c := range m.counts {
		out = append(out, dayJSON{k, c})
	}
	slices.SortFunc(out, func(a, b dayJSON) int {
		return strings.Compare(a.Key.Sender+"\x00"+a.Key.Day, b.Key.Sender+"\x00"+b.Key.Day)
	})
	return json.Marshal(out)
}

// UnmarshalJSON puts what MarshalJSON wrote into the counters.
func (m *SenderLimits) UnmarshalJSON(b []byte) error {
	var days []dayJSON
	if err := json.Unmarshal(b, &days); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, d := range days {
		m.counts[d.Key] = d.Counts
	}
	return nil
}
