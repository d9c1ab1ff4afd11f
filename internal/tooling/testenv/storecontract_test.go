package testenv

import (
	"testing"

	"github.com/unschedule/unschedule/internal/tooling/memory"
)

// TestMemoryStoreContract proves the in-memory store, which the simulation
// runs on, behaves like the DynamoDB store.
func TestMemoryStoreContract(t *testing.T) {
	StoreContract(t, func(*testing.T) ContractStore { return memory.NewStore() })
}

// TestMemorySettingsContract proves the in-memory settings store behaves
// like the DynamoDB one.
func TestMemorySettingsContract(t *testing.T) {
	SettingsContract(t, func(*testing.T) SettingsStores {
		return SettingsStores{Settings: memory.NewSettings(), Tasks: memory.NewStore()}
	})
}
