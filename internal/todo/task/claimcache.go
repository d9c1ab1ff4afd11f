package task

import (
	"context"
	"sync"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
)

// ClaimCache hands the to-do target the task its expiry claim returned,
// when the core and the target run in one process (the to-do app's
// firing function, lambdas/todofire, and InProcess): the claim's write
// returns the task as it wrote it (Store.Expire), so the target need not
// read it again. Only the claim of this process fills it, and a task is
// taken once: a take-over, a reminder or any other read goes to the
// store, as before.
type ClaimCache struct {
	mu      sync.Mutex
	claimed map[contract.Key]Task
}

// NewClaimCache returns an empty cache.
func NewClaimCache() *ClaimCache { return &ClaimCache{claimed: map[contract.Key]Task{}} }

// Items is Items(s) whose Claim keeps the claimed task for Tasks.
func (c *ClaimCache) Items(s Store) CachingItemStore {
	return CachingItemStore{ItemStore: Items(s), cache: c}
}

// Tasks is s whose Get first takes the task this process just claimed.
func (c *ClaimCache) Tasks(s NotifyStore) NotifyStore { return cachedTasks{NotifyStore: s, cache: c} }

// CachingItemStore is an ItemStore that keeps what its claims returned.
type CachingItemStore struct {
	ItemStore
	cache *ClaimCache
}

var (
	_ fire.Store         = CachingItemStore{}
	_ fire.ReminderStore = CachingItemStore{}
)

// Claim implements fire.Store: Store.Expire, keeping the task it wrote.
func (a CachingItemStore) Claim(ctx context.Context, p Payload, now time.Time) error {
	t, err := a.store.Expire(ctx, p.Key.Partition, p.Key.Sort, p.Due, now)
	if err != nil {
		return err
	}
	a.cache.mu.Lock()
	a.cache.claimed[p.Key] = t
	a.cache.mu.Unlock()
	return nil
}

type cachedTasks struct {
	NotifyStore
	cache *ClaimCache
}

// Get takes the task this process's claim returned, if any, else reads.
func (c cachedTasks) Get(ctx context.Context, userID, taskID string) (Task, error) {
	k := Key(userID, taskID)
	c.cache.mu.Lock()
	t, ok := c.cache.claimed[k]
	delete(c.cache.claimed, k)
	c.cache.mu.Unlock()
	if ok {
		return t, nil
	}
	return c.NotifyStore.Get(ctx, userID, taskID)
}
