package provision

import (
	"context"
	"encoding/json"
	"sync"
)

// MemoryCheckpoints is an in-memory Checkpoints (tests, the simulation,
// the dev server). Saves counts successful saves.
type MemoryCheckpoints struct {
	mu    sync.Mutex
	m     map[string]Checkpoint
	Saves int
}

var _ Checkpoints = (*MemoryCheckpoints)(nil)

// NewMemoryCheckpoints returns an empty store.
func NewMemoryCheckpoints() *MemoryCheckpoints { return &MemoryCheckpoints{m: map[string]Checkpoint{}} }

// Load implements Checkpoints.
func (m *MemoryCheckpoints) Load(_ context.Context, id string) (Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cp := m.m[id]
	cp.CampaignID = id
	return cp, nil
}

// Save implements Checkpoints.
func (m *MemoryCheckpoints) Save(_ context.Context, cp Checkpoint) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[cp.CampaignID] = cp
	m.Saves++
	return nil
}

// MarshalJSON writes every checkpoint (make dev's saved state).
func (m *MemoryCheckpoints) MarshalJSON() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return json.Marshal(m.m)
}

// UnmarshalJSON puts what MarshalJSON wrote into the store.
func (m *MemoryCheckpoints) UnmarshalJSON(b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return json.Unmarshal(b, &m.m)
}
