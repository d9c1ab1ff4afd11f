package memory

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/unschedule/unschedule/internal/campaigns/suppress"
	"github.com/unschedule/unschedule/internal/core/inmem"
)

// Suppressions is one suppression list in memory (suppress.Store: tests,
// the dev server): keyed by the normalized address whatever sender added
// it, the first entry kept, as the DynamoDB list of
// internal/campaigns/adapters/ses keeps it.
type Suppressions struct {
	mu sync.Mutex
	m  map[string]suppress.Entry
}

var _ suppress.Store = (*Suppressions)(nil)

// NewSuppressions returns an empty list.
func NewSuppressions() *Suppressions { return &Suppressions{m: map[string]suppress.Entry{}} }

// Add implements suppress.Store.
func (s *Suppressions) Add(_ context.Context, e suppress.Entry) (bool, error) {
	e.Sender, e.Address = suppress.Normalize(e.Sender), suppress.Normalize(e.Address)
	if e.Sender == "" || e.Address == "" || e.Reason == "" {
		return false, errors.New("suppress: an entry needs a sender, an address and a reason")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[e.Address]; ok {
		return false, nil
	}
	s.m[e.Address] = e
	return true, nil
}

// Get implements suppress.Store.
func (s *Suppressions) Get(_ context.Context, address string) (suppress.Entry, bool, error) {
	e, ok := inmem.Lookup(&s.mu, s.m, suppress.Normalize(address))
	return e, ok, nil
}

// MarshalJSON writes the entries, by address (make dev's saved state).
func (s *Suppressions) MarshalJSON() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.SortedFunc(maps.Values(s.m), func(a, b suppress.Entry) int { return strings.Compare(a.Address, b.Address) })
	if out == nil {
		out = []suppress.Entry{}
	}
	return json.Marshal(out)
}

// UnmarshalJSON adds the entries MarshalJSON wrote, each as Add does.
func (s *Suppressions) UnmarshalJSON(b []byte) error {
	var entries []suppress.Entry
	if err := json.Unmarshal(b, &entries); err != nil {
		return err
	}
	for _, e := range entries {
		if _, err := s.Add(context.Background(), e); err != nil {
			return err
		}
	}
	return nil
}
