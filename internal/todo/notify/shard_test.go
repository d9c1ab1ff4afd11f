package notify

import (
	"fmt"
	"math/rand"
	"testing"
)

// The mapping is data: users are subscribed on the topic of their shard.
// If this test fails, deployed users would stop receiving notifications.
func TestShardForIsPinned(t *testing.T) {
	for _, tc := range []struct {
		sub    string
		shards int
		want   int
	}{
		{"a", 1, 0},
		{"a", 2, 1},
		{"a", 7, 1},
		{"a", 5000, 1479},
		{"user-1", 7, 2},
		{"user-1", 5000, 1225},
		{"0b7c4b1e-6a2f-4f3e-9d1a-3c5e8f2a9b10", 2, 1},
		{"0b7c4b1e-6a2f-4f3e-9d1a-3c5e8f2a9b10", 5000, 3335},
		{"9f8e7d6c-5b4a-4321-8765-0fedcba98765", 7, 6},
		{"9f8e7d6c-5b4a-4321-8765-0fedcba98765", 5000, 3774},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.sub, tc.shards), func(t *testing.T) {
			if got := ShardFor(tc.sub, tc.shards); got != tc.want {
				t.Fatalf("ShardFor(%q, %d) = %d, want %d", tc.sub, tc.shards, got, tc.want)
			}
		})
	}
}

func TestShardForRangeAndSpread(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for _, shards := range []int{1, 2, 7, 50} {
		t.Run(fmt.Sprint(shards), func(t *testing.T) {
			hits := make([]int, shards)
			const users = 5000
			for i := 0; i < users; i++ {
				n := ShardFor(randomSub(rng), shards)
				if n < 0 || n >= shards {
					t.Fatalf("shard %d out of [0, %d)", n, shards)
				}
				hits[n]++
			}
			for n, h := range hits {
				// Expected users/shards each; a third of that is far outside
				// any plausible deviation of a uniform hash.
				if h < users/shards/3 {
					t.Fatalf("shard %d got %d of %d users: %v", n, h, users, hits)
				}
			}
		})
	}
}

// Adding a shard moves only the users that land on the new shard.
func TestShardForGrowthMovesUsersOnlyToTheNewShard(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for _, from := range []int{1, 3, 10} {
		t.Run(fmt.Sprintf("%d->%d", from, from+1), func(t *testing.T) {
			moved := 0
			for i := 0; i < 3000; i++ {
				sub := randomSub(rng)
				a, b := ShardFor(sub, from), ShardFor(sub, from+1)
				if a != b {
					moved++
					if b != from {
						t.Fatalf("%s moved from %d to %d, not to the new shard %d", sub, a, b, from)
					}
				}
			}
			if moved == 0 {
				t.Fatal("no user moved to the new shard")
			}
		})
	}
}

func TestShardForPanicsWithoutShards(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("ShardFor(_, 0) did not panic")
		}
	}()
	ShardFor("a", 0)
}

func TestFilterPolicyAndSamePolicy(t *testing.T) {
	if got, want := FilterPolicy("abc-123"), `{"userId":["abc-123"]}`; got != want {
		t.Fatalf("FilterPolicy = %s, want %s", got, want)
	}
	for _, tc := range []struct {
		name string
		a, b string
		want bool
	}{
		{"identical", `{"userId":["u1"]}`, `{"userId":["u1"]}`, true},
		{"white space", `{"userId":["u1"]}`, "{ \"userId\" : [ \"u1\" ] }\n", true},
		{"key order", `{"a":["1"],"userId":["u1"]}`, `{"userId":["u1"],"a":["1"]}`, true},
		{"other user", `{"userId":["u1"]}`, `{"userId":["u2"]}`, false},
		{"extra value", `{"userId":["u1"]}`, `{"userId":["u1","u2"]}`, false},
		{"missing", `{"userId":["u1"]}`, ``, false},
		{"not json", `{"userId":["u1"]}`, `{userId`, false},
		{"scalar not list", `{"userId":["u1"]}`, `{"userId":"u1"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := SamePolicy(tc.a, tc.b); got != tc.want {
				t.Fatalf("SamePolicy(%q, %q) = %t", tc.a, tc.b, got)
			}
		})
	}
}

func randomSub(rng *rand.Rand) string {
	b := make([]byte, 16)
	rng.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
