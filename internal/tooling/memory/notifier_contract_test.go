package memory_test

import (
	"testing"

	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

// outbox is the memory notifier under the notifier contract: it records
// what is published and routes nothing, so only the publish cases run.
type outbox struct{ *memory.Outbox }

func (outbox) Subscribe(t *testing.T, _, _ string) string {
	t.Fatal("the outbox has no subscribers")
	return ""
}

func (outbox) Delivered(t *testing.T, _ string) []testenv.NotifierDelivery {
	t.Fatal("the outbox has no subscribers")
	return nil
}

func TestNotifierContract(t *testing.T) {
	testenv.NotifierContract(t, testenv.NotifierBackend{PublishOnly: true,
		New: func(*testing.T, int) (testenv.ContractNotifier, []string) { return outbox{&memory.Outbox{}}, nil }})
}
