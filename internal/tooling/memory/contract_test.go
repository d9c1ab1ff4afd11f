package memory_test

import (
	"testing"

	"github.com/unschedule/unschedule/internal/todo/todotest"
	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// TestMemoryStoreContract proves the in-memory store, which the simulation
// runs on, behaves like the DynamoDB store.
func TestMemoryStoreContract(t *testing.T) {
	todotest.StoreContract(t, func(*testing.T) todotest.ContractStore { return memory.NewStore() })
}

// TestMemorySettingsContract proves the in-memory settings store behaves
// like the DynamoDB one.
func TestMemorySettingsContract(t *testing.T) {
	todotest.SettingsContract(t, func(*testing.T) todotest.SettingsStores {
		return todotest.SettingsStores{Settings: memory.NewSettings(), Tasks: memory.NewStore()}
	})
}
