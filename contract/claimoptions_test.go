package contract_test

import (
	"context"
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/fire"
	"github.com/unschedule/unschedule/internal/core/inmem"
)

// ClaimOptions render into the claim's one update expression (SET, then
// REMOVE, then ADD, numbers as number placeholders), and the in-memory
// store applies them as DynamoDB applies that expression: ADD adds to a
// number and makes an absent attribute the number, and DynamoDB refuses
// an ADD to a string, an option on a key attribute and one attribute in
// two clauses.
func TestClaimOptions(t *testing.T) {
	s := todo()
	due := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	now := due.Add(time.Second)
	k := contract.Key{Partition: "u1", Sort: "01J"}
	armed := map[string]string{"userId": "u1", "taskId": "01J", "status": "Pending", "dueAt": contract.FormatTime(due)}
	with := func(extra map[string]string) map[string]string { m := maps.Clone(armed); maps.Copy(m, extra); return m }
	cases := []struct {
		name    string
		opt     contract.ClaimOptions
		stored  map[string]string
		update  string            // the update expression, placeholders resolved
		numbers map[string]string // number placeholders' values by attribute
		claims  int               // claims in a row (the item re-armed between them by a writer's SET)
		want    map[string]string // attributes beyond the claim's own; nil: refused
	}{
		{name: "add to an absent attribute", opt: contract.ClaimOptions{Add: map[string]int64{"attempt": 1}}, stored: armed,
			update: "SET status = :s, expiredAt = :s, notifyClaimAt = :s ADD attempt :n", numbers: map[string]string{"attempt": "1"},
			claims: 1, want: map[string]string{"attempt": "1"}},
		{name: "add twice adds to the number", opt: contract.ClaimOptions{Add: map[string]int64{"attempt": 2}}, stored: armed,
			update: "SET status = :s, expiredAt = :s, notifyClaimAt = :s ADD attempt :n", numbers: map[string]string{"attempt": "2"},
			claims: 2, want: map[string]string{"attempt": "4"}},
		{name: "all three clauses", opt: contract.ClaimOptions{AlsoSet: map[string]string{"updatedAt": "x"}, AlsoRemove: []string{"pendingTaskId"},
			Add: map[string]int64{"b": -1, "a": 5}}, stored: with(map[string]string{"pendingTaskId": "p"}),
			update:  "SET status = :s, expiredAt = :s, notifyClaimAt = :s, updatedAt = :s REMOVE pendingTaskId ADD a :n, b :n",
			numbers: map[string]string{"a": "5", "b": "-1"}, claims: 1, want: map[string]string{"updatedAt": "x", "a": "5", "b": "-1"}},
		{name: "add to a string is refused", opt: contract.ClaimOptions{Add: map[string]int64{"attempt": 1}},
			stored: with(map[string]string{"attempt": "1"}), update: "SET status = :s, expiredAt = :s, notifyClaimAt = :s ADD attempt :n",
			numbers: map[string]string{"attempt": "1"}, claims: 1},
		{name: "add to a key attribute is refused", opt: contract.ClaimOptions{Add: map[string]int64{"taskId": 1}}, stored: armed,
			update: "SET status = :s, expiredAt = :s, notifyClaimAt = :s ADD taskId :n", numbers: map[string]string{"taskId": "1"}, claims: 1},
		{name: "set and add of one attribute are refused", opt: contract.ClaimOptions{AlsoSet: map[string]string{"n": "x"}, Add: map[string]int64{"n": 1}},
			stored: armed, update: "SET status = :s, expiredAt = :s, notifyClaimAt = :s, n = :s ADD n :n", numbers: map[string]string{"n": "1"}, claims: 1},
		{name: "add to the claim's own attribute is refused", opt: contract.ClaimOptions{Add: map[string]int64{"status": 1}}, stored: armed,
			update: "SET status = :s, expiredAt = :s, notifyClaimAt = :s ADD status :n", numbers: map[string]string{"status": "1"}, claims: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := s.Claim(k, contract.FormatTime(due), now, c.opt)
			got := u.UpdateExpression
			for p, n := range u.Names {
				got = strings.ReplaceAll(got, p, n)
			}
			nums := map[string]string{}
			for p := range u.Values {
				got = strings.ReplaceAll(got, p+",", ":s,")
				got = strings.ReplaceAll(got, p+" ", ":s ")
				got = strings.TrimSuffix(got, p) + map[bool]string{true: ":s"}[strings.HasSuffix(got, p)]
			}
			for p, v := range u.Numbers {
				if _, dup := u.Values[p]; dup {
					t.Fatalf("placeholder %s is a string and a number", p)
				}
				i := strings.Index(got, " "+p)
				nums[got[strings.LastIndexAny(got[:i], " ,")+1:i]] = v
				got = strings.ReplaceAll(got, p, ":n")
			}
			if got != c.update || !maps.Equal(nums, c.numbers) {
				t.Errorf("update %q numbers %v, want %q %v", got, nums, c.update, c.numbers)
			}

			st := inmem.NewItems(s)
			st.ClaimOptions = c.opt
			if err := st.Put(c.stored); err != nil {
				t.Fatal(err)
			}
			var err error
			for i := range c.claims {
				if i > 0 { // a writer re-arms the item with SETs, which leave a number a number
					if err := st.Update(k, map[string]string{"status": "Pending"}); err != nil {
						t.Fatal(err)
					}
				}
				if err = st.Claim(context.Background(), contract.Payload{Key: k, Due: due}, now); err != nil {
					break
				}
			}
			after, _ := st.Attrs(k)
			if c.want == nil {
				if !errors.Is(err, inmem.ErrValidation) || errors.Is(err, fire.ErrConditionFailed) || !maps.Equal(after, c.stored) {
					t.Fatalf("claim = %v leaving %v, want a ValidationException that changes nothing", err, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := with(c.want)
			for _, n := range c.opt.AlsoRemove {
				delete(want, n)
			}
			maps.Copy(want, map[string]string{"status": "Expired", "expiredAt": contract.FormatTime(now), "notifyClaimAt": contract.FormatTime(now)})
			if !maps.Equal(after, want) {
				t.Fatalf("item %v, want %v", after, want)
			}
		})
	}
}
