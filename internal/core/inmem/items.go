package inmem

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/changefeed"
	"github.com/unschedule/unschedule/internal/core/fire"
)

// Items is a table of any contract.Schema in memory: items are string
// attributes, written by plain puts and deletes (as a writer that is not
// ours would) and by the contract's conditional writes (fire.Store, with
// the contract's Go predicates). Every write appends to a change feed,
// like a DynamoDB stream with NEW_AND_OLD_IMAGES read with the schema.
type Items struct {
	mu     sync.Mutex
	schema contract.Schema
	items  map[contract.Key]map[string]string
	feed   Feed
	// Fail, when set, is called before each fire.Store operation; a
	// non-nil error is returned instead of doing it (fault injection).
	Fail func(op string) error
	// IndexKeys are the key attributes of the table's indexes (the armed
	// index's state and due attributes): a put with an empty string in
	// one fails, as DynamoDB refuses an empty index key value.
	IndexKeys []string
	// ClaimOptions are the adopter's own attributes that Claim writes
	// with the claim, applied as DynamoDB applies contract.Schema.Claim's
	// rendering of them (see applyOptions).
	ClaimOptions contract.ClaimOptions
	// nums marks the attributes of an item that hold a number (written
	// by an ADD); every other attribute is a string, as DynamoDB holds
	// what a put or a SET writes.
	nums map[contract.Key]map[string]bool
}

var (
	_ fire.Store         = (*Items)(nil)
	_ fire.ReminderStore = (*Items)(nil)
)

// NewItems returns an empty table of schema s.
func NewItems(s contract.Schema) *Items {
	return &Items{schema: s, items: map[contract.Key]map[string]string{}, nums: map[contract.Key]map[string]bool{}}
}

// ErrEmptyIndexKey: a put with an empty string in an index key attribute
// (DynamoDB's ValidationException).
var ErrEmptyIndexKey = errors.New("empty index key value")

// Put writes an item as is (PutItem without a condition): an INSERT, or a
// MODIFY of the item it replaces. It fails only on an item without its
// key.
func (s *Items) Put(attrs map[string]string) error {
	it, err := s.schema.ItemFrom(attrs)
	if err != nil {
		return fmt.Errorf("put item: %w", err)
	}
	for _, k := range s.IndexKeys {
		if v, ok := attrs[k]; ok && v == "" {
			return fmt.Errorf("put item: %w: %s is an empty string, an index key", ErrEmptyIndexKey, k)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.items[it.Key]
	s.items[it.Key] = maps.Clone(attrs)
	delete(s.nums, it.Key)
	if ok {
		s.record(changefeed.Modify, it.Key, old, attrs)
	} else {
		s.record(changefeed.Insert, it.Key, nil, attrs)
	}
	return nil
}

// Update sets and removes attributes of the item at k as UpdateItem
// without a condition does ("SET a = :v, ... REMOVE b, ..."), and refuses
// what DynamoDB refuses
// (https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateItem.html,
// https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html):
// an incomplete key, a key attribute in either list (the key cannot be
// updated), an empty attribute name, and one attribute both set and
// removed (two document paths overlap). An update of an item that does not
// exist creates it with its key and the set attributes (an INSERT); one
// that changes nothing records no change, as a stream writes no record
// for it.
func (s *Items) Update(k contract.Key, set map[string]string, remove ...string) error {
	keys := map[string]string{s.schema.PartitionKey: k.Partition}
	if !s.schema.NoSortKey {
		keys[s.schema.SortKey] = k.Sort
	}
	for name, v := range keys {
		if v == "" {
			return fmt.Errorf("update item: ValidationException: the key attribute %s is empty: give the whole key", name)
		}
	}
	seen := map[string]bool{}
	for name := range set {
		seen[name] = true
	}
	for _, name := range append(slices.Sorted(maps.Keys(set)), remove...) {
		switch _, isKey := keys[name]; {
		case name == "":
			return errors.New("update item: ValidationException: an attribute name is empty")
		case isKey:
			return fmt.Errorf("update item: ValidationException: cannot update attribute %s: it is part of the key", name)
		}
	}
	removed := map[string]bool{}
	for _, name := range remove {
		if seen[name] || removed[name] {
			return fmt.Errorf("update item: ValidationException: two document paths overlap: %s is set or removed twice", name)
		}
		removed[name] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, found := s.items[k]
	nw := maps.Clone(old)
	if !found {
		nw = maps.Clone(keys)
	}
	maps.Copy(nw, set)
	for _, name := range remove {
		delete(nw, name)
	}
	for _, name := range append(slices.Collect(maps.Keys(set)), remove...) {
		delete(s.nums[k], name)
	}
	switch {
	case !found:
		s.items[k] = nw
		s.record(changefeed.Insert, k, nil, nw)
	case !maps.Equal(old, nw):
		s.items[k] = nw
		s.record(changefeed.Modify, k, old, nw)
	}
	return nil
}

// Delete removes an item (DeleteItem without a condition); deleting
// nothing records nothing.
func (s *Items) Delete(k contract.Key) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.items[k]; ok {
		delete(s.items, k)
		delete(s.nums, k)
		s.record(changefeed.Remove, k, old, nil)
	}
}

// Attrs returns a copy of an item's attributes.
func (s *Items) Attrs(k contract.Key) (map[string]string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.items[k]
	return maps.Clone(a), ok
}

// Changes returns the change feed from position from on, and the next
// position to read from.
func (s *Items) Changes(from int) ([]changefeed.Change, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.feed.Since(from)
}

// record appends a change; the caller holds mu.
func (s *Items) record(kind changefeed.Kind, k contract.Key, old, new map[string]string) {
	s.feed.Add(kind, k, s.image(old), s.image(new))
}

func (s *Items) image(attrs map[string]string) *contract.Item {
	if attrs == nil {
		return nil
	}
	it, _ := s.schema.ItemFrom(attrs) // every stored item has its key
	return &it
}

func (s *Items) fail(op string) error { return Inject(s.Fail, op) }

// write applies a conditional write: when ok holds for the item, set
// its attributes and record the change; ErrConditionFailed otherwise (a
// missing item included).
func (s *Items) write(op string, k contract.Key, ok func(contract.Item) bool, set map[string]string) error {
	return s.writeWith(op, k, ok, set, contract.ClaimOptions{})
}

// writeWith is write with the adopter's options applied in the same
// write (applyOptions).
func (s *Items) writeWith(op string, k contract.Key, ok func(contract.Item) bool, set map[string]string, opt contract.ClaimOptions) error {
	if err := s.checkOptions(set, opt); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	_, _, err := CondPut(&s.mu, s.Fail, op, s.items, k,
		func(cur map[string]string, found bool) error {
			if !found || !ok(*s.image(cur)) {
				return fire.ErrConditionFailed
			}
			for _, name := range slices.Sorted(maps.Keys(opt.Add)) {
				if _, has := cur[name]; has && !s.nums[k][name] {
					return fmt.Errorf("%s: %w: ADD %s: the attribute holds a string, not a number", op, ErrValidation, name)
				}
			}
			return nil
		},
		func(cur map[string]string) map[string]string {
			nw := maps.Clone(cur)
			maps.Copy(nw, set)
			s.applyOptions(k, nw, opt)
			return nw
		},
		func(old map[string]string, _ bool, nw map[string]string) { s.record(changefeed.Modify, k, old, nw) })
	return err
}

// ErrValidation is DynamoDB's ValidationException: a write it refuses
// whatever the item holds, or an ADD to an attribute that is not a
// number.
var ErrValidation = errors.New("ValidationException")

// checkOptions refuses what DynamoDB refuses in an update expression
// before it reads the item
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Expressions.UpdateExpressions.html):
// an empty attribute name, a key attribute (the key cannot be updated),
// and one attribute in two clauses (two document paths overlap). set is
// the write's own SET clauses.
func (s *Items) checkOptions(set map[string]string, opt contract.ClaimOptions) error {
	seen := map[string]bool{}
	names := append(slices.Sorted(maps.Keys(set)), slices.Sorted(maps.Keys(opt.AlsoSet))...)
	names = append(append(names, opt.AlsoRemove...), slices.Sorted(maps.Keys(opt.Add))...)
	for i, name := range names {
		switch {
		case name == "":
			return fmt.Errorf("%w: an attribute name is empty", ErrValidation)
		case name == s.schema.PartitionKey || (!s.schema.NoSortKey && name == s.schema.SortKey):
			return fmt.Errorf("%w: cannot update attribute %s: it is part of the key", ErrValidation, name)
		case seen[name] && i >= len(set):
			return fmt.Errorf("%w: two document paths overlap: %s is in two clauses", ErrValidation, name)
		}
		seen[name] = true
	}
	return nil
}

// applyOptions applies opt to the item nw at k as DynamoDB applies
// contract.ClaimOptions: AlsoSet sets strings, AlsoRemove removes, and
// Add adds to a number (an absent attribute becomes the number; the
// caller refused an attribute that holds a string). The caller holds
// mu.
func (s *Items) applyOptions(k contract.Key, nw map[string]string, opt contract.ClaimOptions) {
	maps.Copy(nw, opt.AlsoSet)
	for _, name := range opt.AlsoRemove {
		delete(nw, name)
	}
	for _, name := range append(slices.Collect(maps.Keys(opt.AlsoSet)), opt.AlsoRemove...) {
		delete(s.nums[k], name)
	}
	for name, n := range opt.Add {
		cur, _ := strconv.ParseInt(nw[name], 10, 64) // absent: 0
		nw[name] = strconv.FormatInt(cur+n, 10)
		if s.nums[k] == nil {
			s.nums[k] = map[string]bool{}
		}
		s.nums[k][name] = true
	}
}

// Claim implements fire.Store (contract.Schema.Claimable, then the
// claim's writes with ClaimOptions), comparing the due attribute as stored
// (contract.AsStored), as the DynamoDB item store does.
func (s *Items) Claim(ctx context.Context, p contract.Payload, now time.Time) error {
	at := contract.FormatTime(now)
	return s.asStored(ctx, p, func(sp contract.Spelling) error {
		return s.writeWith("Claim", p.Key, func(it contract.Item) bool { return s.schema.Claimable(it, sp.Due) },
			map[string]string{s.schema.StateAttr: s.schema.FiredState, s.schema.FiredAtAttr: at, s.schema.ClaimAtAttr: at}, s.ClaimOptions)
	})
}

// TakeOver implements fire.Store (contract.Schema.TakeOverable), comparing
// the due attribute as stored (contract.AsStored).
func (s *Items) TakeOver(ctx context.Context, p contract.Payload, now time.Time, lease time.Duration) error {
	return s.asStored(ctx, p, func(sp contract.Spelling) error {
		return s.write("TakeOver", p.Key, func(it contract.Item) bool { return s.schema.TakeOverable(it, sp.Due, now, lease) },
			map[string]string{s.schema.ClaimAtAttr: contract.FormatTime(now)})
	})
}

// asStored runs write with the spelling of p's times that the item
// stores (contract.AsStored), reading it again with Get.
func (s *Items) asStored(ctx context.Context, p contract.Payload, write func(contract.Spelling) error) error {
	return contract.AsStored(p.Due, p.Remind, write, func(err error) bool { return errors.Is(err, fire.ErrConditionFailed) },
		func() (contract.Item, bool, error) { return s.Get(ctx, p.Key) })
}

// MarkDelivered implements fire.Store (contract.Schema.Markable).
func (s *Items) MarkDelivered(_ context.Context, k contract.Key, at time.Time) error {
	return s.write("MarkDelivered", k, s.schema.Markable,
		map[string]string{s.schema.DeliveredAtAttr: contract.FormatTime(at)})
}

// RemindClaim implements fire.ReminderStore (contract.Schema.RemindClaimable),
// comparing both times as stored (contract.AsStored).
func (s *Items) RemindClaim(ctx context.Context, p contract.Payload, now time.Time, lease time.Duration) error {
	return s.asStored(ctx, p, func(sp contract.Spelling) error {
		return s.write("RemindClaim", p.Key, func(it contract.Item) bool { return s.schema.RemindClaimable(it, sp, now, lease) },
			map[string]string{s.schema.RemindClaimAtAttr: contract.FormatTime(now)})
	})
}

// MarkReminded implements fire.ReminderStore (contract.Schema.RemindMarkable).
func (s *Items) MarkReminded(_ context.Context, p contract.Payload) error {
	return s.write("MarkReminded", p.Key, func(it contract.Item) bool { return s.schema.RemindMarkable(it, p.Remind) },
		map[string]string{s.schema.RemindedAttr: contract.FormatTime(p.Remind)})
}

// Get implements fire.Store.
func (s *Items) Get(_ context.Context, k contract.Key) (contract.Item, bool, error) {
	if err := s.fail("Get"); err != nil {
		return contract.Item{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.items[k]
	if !ok {
		return contract.Item{}, false, nil
	}
	return *s.image(a), true, nil
}
