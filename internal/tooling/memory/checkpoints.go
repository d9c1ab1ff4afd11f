package memory

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/unschedule/unschedule/internal/campaigns/provision"
)

// CampaignCheckpoints is provisioning's checkpoints in memory
// (provision.Checkpoints: tests, the simulation, the dev server).
type CampaignCheckpoints struct {
	mu sync.Mutex
	m  map[string]provision.Checkpoint
}

var _ provision.Checkpoints = (*CampaignCheckpoints)(nil)

// NewCampaignCheckpoints returns an empty store.
func NewCampaignCheckpoints() *CampaignCheckpoints {
	return &CampaignCheckpoints{m: map[string]provision.Checkpoint{}}
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

// MarshalJSON writes every checkpoint (make dev's saved state).
func (m *CampaignCheckpoints) MarshalJSON() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return json.Marshal(m.m)
}

// UnmarshalJSON puts what MarshalJSON wrote into the store.
func (m *CampaignCheckpoints) UnmarshalJSON(b []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return json.Unmarshal(b, &m.m)
}
