package memory

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/unschedule/unschedule/internal/campaigns/provision"
)

// CampaignCheckpoints is provisioning's checkpoints in memory
// (provision.Checkpoints: tests, the simulation, the dev server).
type CampaignCheckpoints struct{ savedMap[provision.Checkpoint] }

var _ provision.Checkpoints = (*CampaignCheckpoints)(nil)

// NewCampaignCheckpoints returns an empty store.
func NewCampaignCheckpoints() *CampaignCheckpoints {
	return &CampaignCheckpoints{savedMap[provision.Checkpoint]{m: map[string]provision.Checkpoint{}}}
}

// Load implements provision.Checkpoints.
func (m *CampaignCheckpoints) Load(_ context.Context, id string) (provision.Checkpoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cp := m.m[id]
	cp.CampaignID = id
	return cp, nil
}

// Save implements provision.Checkpoints.
func (m *CampaignCheckpoints) Save(_ context.Context, cp provision.Checkpoint) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.m[cp.CampaignID] = cp
	return nil
}

// savedMap is a map behind a lock, saved as one JSON object (make dev's
// saved state).
type savedMap[V any] struct {
	mu sync.Mutex
	m  map[string]V
}

// MarshalJSON writes every entry.
func (s *savedMap[V]) MarshalJSON() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.Marshal(s.m)
}

// UnmarshalJSON puts what MarshalJSON wrote into the map.
func (s *savedMap[V]) UnmarshalJSON(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return json.Unmarshal(b, &s.m)
}
