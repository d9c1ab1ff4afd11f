package memory

import "sync"

// condWrite is the in-memory world's one conditional write, as DynamoDB
// applies one: the fault injector (fail, op; nil: none), then under mu
// the lookup of k in m, the condition ok on what is stored (found false:
// no item), next's value made from the stored one (a copy: next must not
// change what cur shares, such as a map), the put, and record's note of
// the change (a feed entry, a counter), still under mu. A refused
// condition writes and records nothing. It returns the stored value
// before the write (on a refusal too) and after it.
func condWrite[K comparable, V any](mu *sync.Mutex, fail func(string) error, op string, m map[K]V, k K,
	ok func(cur V, found bool) error, next func(cur V) V, record func(old V, found bool, new V)) (before, after V, err error) {
	if err := inject(fail, op); err != nil {
		return before, after, err
	}
	mu.Lock()
	defer mu.Unlock()
	cur, found := m[k]
	if err := ok(cur, found); err != nil {
		return cur, after, err
	}
	nw := next(cur)
	m[k] = nw
	if record != nil {
		record(cur, found, nw)
	}
	return cur, nw, nil
}

// lookup reads k in m under mu.
func lookup[K comparable, V any](mu *sync.Mutex, m map[K]V, k K) (V, bool) {
	mu.Lock()
	defer mu.Unlock()
	v, ok := m[k]
	return v, ok
}

// countWhere counts the xs that match, under mu.
func countWhere[T any](mu *sync.Mutex, xs []T, match func(T) bool) int {
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, x := range xs {
		if match(x) {
			n++
		}
	}
	return n
}
