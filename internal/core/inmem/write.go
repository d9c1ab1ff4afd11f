package inmem

import "sync"

// CondWrite is the in-memory world's one conditional write, as DynamoDB
// applies one: the fault injector (fail, op; nil: none), then under mu
// the lookup get of what is stored (found false: no item), the condition
// ok on it, next's value made from it (a copy: next must not change what
// cur shares, such as a map; keep false deletes the item), and put,
// which stores it and records the change (a feed entry, an index, a
// counter), still under mu. A refused condition writes and records
// nothing. It returns the stored value before the write (on a refusal
// too) and after it.
func CondWrite[V any](mu *sync.Mutex, fail func(string) error, op string, get func() (V, bool),
	ok func(cur V, found bool) error, next func(cur V) (V, bool), put func(old V, found bool, new V, keep bool)) (before, after V, err error) {
	if err := Inject(fail, op); err != nil {
		return before, after, err
	}
	mu.Lock()
	defer mu.Unlock()
	cur, found := get()
	if err := ok(cur, found); err != nil {
		return cur, after, err
	}
	nw, keep := next(cur)
	put(cur, found, nw, keep)
	if !keep {
		return cur, after, nil
	}
	return cur, nw, nil
}

// CondPut is CondWrite on a map whose writes never delete: put stores
// next's value at k, then record (nil: none) notes the change.
func CondPut[K comparable, V any](mu *sync.Mutex, fail func(string) error, op string, m map[K]V, k K,
	ok func(cur V, found bool) error, next func(cur V) V, record func(old V, found bool, new V)) (before, after V, err error) {
	return CondWrite(mu, fail, op, func() (V, bool) { v, found := m[k]; return v, found }, ok,
		func(cur V) (V, bool) { return next(cur), true },
		func(old V, found bool, nw V, _ bool) {
			m[k] = nw
			if record != nil {
				record(old, found, nw)
			}
		})
}

// lookup reads k in m under mu.
func Lookup[K comparable, V any](mu *sync.Mutex, m map[K]V, k K) (V, bool) {
	mu.Lock()
	defer mu.Unlock()
	v, ok := m[k]
	return v, ok
}

// CountWhere counts the xs that match, under mu.
func CountWhere[T any](mu *sync.Mutex, xs []T, match func(T) bool) int {
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
