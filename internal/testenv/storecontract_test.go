package testenv

import (
	"testing"

	"github.com/unschedule/unschedule/internal/memory"
)

// TestMemoryStoreContract proves the in-memory store, which the simulation
// runs on, behaves like the DynamoDB store.
func TestMemoryStoreContract(t *testing.T) {
	StoreContract(t, func(*testing.T) ContractStore { return memory.NewStore() })
}
