package inmem_test

import (
	"testing"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/tooling/testenv"
)

func TestItemsFireStoreContract(t *testing.T) {
	testenv.FireStoreContract(t, func(t *testing.T, s contract.Schema) testenv.FireBackend {
		items := inmem.NewItems(s)
		return testenv.FireBackend{
			Store: items,
			Put: func(t *testing.T, attrs map[string]string) {
				if err := items.Put(attrs); err != nil {
					t.Fatal(err)
				}
			},
			Attrs: func(_ *testing.T, k contract.Key) map[string]string {
				a, _ := items.Attrs(k)
				return a
			},
		}
	})
}
