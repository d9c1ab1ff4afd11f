package task_test

import (
	"context"
	"testing"
	"time"

	"github.com/unschedule/unschedule/internal/todo/task"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// The target takes the task this process's claim returned, once; any
// other read (no claim, or a second one) goes to the store.
func TestClaimCache(t *testing.T) {
	due := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	const id = "01JD00000000000000000000AA"
	store := memory.NewStore()
	store.Put(task.Task{UserID: "u1", TaskID: id, Title: "t", Status: task.StatusPending, DueAt: due})
	cache := task.NewClaimCache()
	items, tasks := cache.Items(store), cache.Tasks(store)
	ctx := context.Background()

	if got, err := tasks.Get(ctx, "u1", id); err != nil || got.Status != task.StatusPending {
		t.Fatalf("before a claim: %+v, %v; want the stored task", got, err)
	}
	if err := items.Claim(ctx, task.Payload{Key: task.Key("u1", id), Due: due}, due); err != nil {
		t.Fatal(err)
	}
	// Changed behind the claim's back: the cached image is the claim's.
	store.Put(task.Task{UserID: "u1", TaskID: id, Title: "changed", Status: task.StatusDone, DueAt: due})
	if got, err := tasks.Get(ctx, "u1", id); err != nil || got.Status != task.StatusExpired || got.Title != "t" {
		t.Fatalf("after the claim: %+v, %v; want the task the claim returned (Expired)", got, err)
	}
	if got, err := tasks.Get(ctx, "u1", id); err != nil || got.Title != "changed" {
		t.Fatalf("a second read: %+v, %v; want the store's", got, err)
	}
}
