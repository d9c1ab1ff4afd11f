package memory_test

import (
	"testing"

	"github.com/unschedule/unschedule/internal/todo/todotest"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// outbox is the memory notifier under the notifier contract: it records
// what is published and routes nothing, so only the publish cases run.
type outbox struct{ *memory.Outbox }

func (outbox) Subscribe(t *testing.T, _, _ string) string {
	t.Fatal("the outbox has no subscribers")
	return ""
}

func (outbox) Delivered(t *testing.T, _ string) []todotest.NotifierDelivery {
	t.Fatal("the outbox has no subscribers")
	return nil
}

func TestNotifierContract(t *testing.T) {
	todotest.NotifierContract(t, todotest.NotifierBackend{PublishOnly: true,
		New: func(*testing.T, int) (todotest.ContractNotifier, []string) { return outbox{&memory.Outbox{}}, nil }})
}
