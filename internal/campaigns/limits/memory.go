package limits

import (
	"context"
	"maps"
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
