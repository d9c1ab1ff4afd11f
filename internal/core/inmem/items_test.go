package inmem_test

import (
	"errors"
	"testing"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire/firetest"
	"github.com/unschedule/unschedule/internal/core/inmem"
)

func TestItemsFireStoreContract(t *testing.T) {
	firetest.FireStoreContract(t, func(t *testing.T, s contract.Schema) firetest.FireBackend {
		items := inmem.NewItems(s)
		return firetest.FireBackend{
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

// A table with an index refuses an empty string in an index key, as
// DynamoDB does; leaving the attribute out is fine.
func TestItemsRefuseAnEmptyIndexKey(t *testing.T) {
	s := contract.Default()
	items := inmem.NewItems(s)
	items.IndexKeys = []string{s.StateAttr, s.DueAttr}
	for _, tc := range []struct {
		name  string
		attrs map[string]string
		ok    bool
	}{
		{"both set", map[string]string{"pk": "a", "sk": "1", "status": "Pending", "dueAt": "2030-01-01T00:00:00Z"}, true},
		{"no due attribute", map[string]string{"pk": "a", "sk": "2", "status": "Pending"}, true},
		{"an empty due attribute", map[string]string{"pk": "a", "sk": "3", "status": "Pending", "dueAt": ""}, false},
		{"an empty state", map[string]string{"pk": "a", "sk": "4", "status": ""}, false},
	} {
		if err := items.Put(tc.attrs); (err == nil) != tc.ok || (err != nil && !errors.Is(err, inmem.ErrEmptyIndexKey)) {
			t.Errorf("%s: Put = %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}
