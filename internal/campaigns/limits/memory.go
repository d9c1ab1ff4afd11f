package limits

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Memory is Counters in memory, for tests and dev. It is exactly as
// strict as the DynamoDB counters: the same all-or-none condition, a
// missing counter counts 0, an add whose By is over its Max is refused,
// and it forgets nothing (DynamoDB's TTL deletes a day only after it).
type Memory struct {
	mu     sync.Mutex
	counts map[Key]map[string]int64
}

var _ Counters = (*Memory)(nil)

// NewMemory returns empty counters.
func NewMemory() *Memory { return &Memory{counts: map[Key]map[string]int64{}} }

// Add implements Counters.
func (m *Memory) Add(_ context.Context, key Key, _ time.Time, adds []Add) (map[string]int64, bool, error) {
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
func (m *Memory) Counts(key Key) map[string]int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.counts[key])
}

// dayJSON is one key's counters as MarshalJSON writes them.
type dayJSON struct {
	Key    Key              `json:"key"`
	Counts map[string]int64 `json:"counts"`
}

// MarshalJSON writes every key's counters (make dev's saved state).
func (m *Memory) MarshalJSON() ([]byte, error) {
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
func (m *Memory) UnmarshalJSON(b []byte) error {
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
