package inmem

import (
	"context"
	"sync"

	"github.com/unschedule/unschedule/internal/core/reconcile"
)

// Checkpoints is a reconcile.Checkpoints in memory: the reconciler's
// checkpoint in the pipeline, the simulation and make dev. A deployed
// reconciler keeps it in its table (internal/core/adapters/checkpoint).
type Checkpoints struct {
	mu sync.Mutex
	cp reconcile.Checkpoint
}

var _ reconcile.Checkpoints = (*Checkpoints)(nil)

// Load implements reconcile.Checkpoints.
func (c *Checkpoints) Load(context.Context) (reconcile.Checkpoint, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cp, nil
}

// Save implements reconcile.Checkpoints.
func (c *Checkpoints) Save(_ context.Context, cp reconcile.Checkpoint) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cp = cp
	return nil
}
