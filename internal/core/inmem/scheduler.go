package inmem

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/timer"
)

// Scheduler is a timer.Timer in memory, with the semantics of one
// EventBridge Scheduler group: names are unique, a create retried with the
// same client token succeeds, and a fired schedule deletes itself
// (ActionAfterCompletion DELETE).
type Scheduler struct {
	mu        sync.Mutex
	schedules map[string]contract.Schedule
	// names is the sorted listing: built by the first List, then kept in
	// step by create and delete.
	names []string
	// Calls counts API calls by operation.
	Calls map[string]int
	// ListPrefix is what the listing's names start with, as the adapter's
	// NamePrefix (the schema's ScheduleNamePrefix). Default: "", every
	// schedule of the group. Set it before the first List.
	ListPrefix string
	// Fail, when set, is called before each operation; a non-nil error is
	// returned instead of doing it (fault injection).
	Fail func(op, name string) error
}

var _ timer.Timer = (*Scheduler)(nil)

// NewScheduler returns an empty scheduler.
func NewScheduler() *Scheduler {
	return &Scheduler{schedules: map[string]contract.Schedule{}, Calls: map[string]int{}}
}

// listPrefix is the NamePrefix of the listing.
func (s *Scheduler) listPrefix() string { return s.ListPrefix }

func (s *Scheduler) call(op, name string) error {
	s.Calls[op]++
	if s.Fail == nil {
		return nil
	}
	return s.Fail(op, name)
}

// Arm implements timer.Timer.
func (s *Scheduler) Arm(_ context.Context, sc contract.Schedule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("Arm", sc.Name); err != nil {
		return err
	}
	if cur, ok := s.schedules[sc.Name]; ok {
		// Without a client token the scheduler makes up a random one, so
		// only a create that repeats a given token is a retry:
		// https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
		if sc.ClientToken != "" && cur.ClientToken == sc.ClientToken {
			return nil
		}
		return timer.ErrExists
	}
	s.schedules[sc.Name] = sc
	s.listed(sc.Name, true)
	return nil
}

// listed adds name to the sorted listing, or removes it; the caller holds
// mu.
func (s *Scheduler) listed(name string, add bool) {
	if s.names == nil || !strings.HasPrefix(name, s.listPrefix()) {
		return
	}
	i := sort.SearchStrings(s.names, name)
	switch {
	case add:
		s.names = slices.Insert(s.names, i, name)
	case i < len(s.names) && s.names[i] == name:
		s.names = slices.Delete(s.names, i, i+1)
	}
}

// Move implements timer.Timer.
func (s *Scheduler) Move(_ context.Context, sc contract.Schedule, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("Move", sc.Name); err != nil {
		return err
	}
	if _, ok := s.schedules[sc.Name]; !ok {
		return timer.ErrNotFound
	}
	s.schedules[sc.Name] = sc
	return nil
}

// Disarm implements timer.Timer.
func (s *Scheduler) Disarm(_ context.Context, name string, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("Disarm", name); err != nil {
		return err
	}
	if _, ok := s.schedules[name]; !ok {
		return timer.ErrNotFound
	}
	delete(s.schedules, name)
	s.listed(name, false)
	return nil
}

var _ timer.Reader = (*Scheduler)(nil)

// maxListResults is the most ListSchedules returns in one call.
const maxListResults = 100

// Get implements timer.Reader.
func (s *Scheduler) Get(_ context.Context, name string, _ time.Time) (contract.Schedule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("Get", name); err != nil {
		return contract.Schedule{}, err
	}
	sc, ok := s.schedules[name]
	if !ok {
		return contract.Schedule{}, timer.ErrNotFound
	}
	// GetSchedule does not return the client token:
	// https://docs.aws.amazon.com/scheduler/latest/APIReference/API_GetSchedule.html
	sc.ClientToken = ""
	return sc, nil
}

// Lookup returns a schedule by name, without counting an API call.
func (s *Scheduler) Lookup(name string) (contract.Schedule, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sc, ok := s.schedules[name]
	return sc, ok
}

// List implements timer.Reader as EventBridge Scheduler's
// ListSchedules does: it returns names only (a caller that needs At or
// Payload calls Get), in pages of at most 100. The cursor is the last
// name returned.
// https://docs.aws.amazon.com/scheduler/latest/APIReference/API_ListSchedules.html
func (s *Scheduler) List(_ context.Context, page timer.PageRequest) (timer.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.call("List", ""); err != nil {
		return timer.Page{}, err
	}
	if s.names == nil {
		s.names = make([]string, 0, len(s.schedules))
		for name := range s.schedules {
			if strings.HasPrefix(name, s.listPrefix()) {
				s.names = append(s.names, name)
			}
		}
		sort.Strings(s.names)
	}
	return pageOf(s.names, page), nil
}

// All returns every schedule, ordered by name.
func (s *Scheduler) All() []contract.Schedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]contract.Schedule, 0, len(s.schedules))
	for _, sc := range s.schedules {
		out = append(out, sc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Fire removes and returns every schedule due at now, earliest first, as
// the scheduler would invoke and then delete them.
func (s *Scheduler) Fire(now time.Time) []contract.Schedule {
	s.mu.Lock()
	defer s.mu.Unlock()
	var due []contract.Schedule
	for name, sc := range s.schedules {
		if !sc.At.After(now) {
			due = append(due, sc)
			delete(s.schedules, name)
			s.listed(name, false)
		}
	}
	sortSchedules(due)
	return due
}

// pageOf is the page of sorted names after the cursor, at most
// maxListResults of them, as ListSchedules returns it; names is only read.
func pageOf(names []string, page timer.PageRequest) timer.Page {
	names = names[sort.SearchStrings(names, page.Cursor):]
	if len(names) > 0 && names[0] == page.Cursor {
		names = names[1:]
	}
	limit := page.Limit
	if limit <= 0 {
		limit = timer.DefaultLimit
	}
	limit = min(limit, maxListResults)
	var p timer.Page
	if len(names) > limit {
		names = names[:limit]
		p.Cursor = names[limit-1]
	}
	for _, n := range names {
		p.Schedules = append(p.Schedules, contract.Schedule{Name: n})
	}
	return p
}
