package notify

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"reflect"
)

// ShardFor maps a user's sub to one of shards topic shards, 0 <= n < shards.
//
// The mapping is part of the data: a user is subscribed on the topic of
// their shard, so it must never change while the shard count stays the
// same. It depends on nothing but its inputs: the first 8 bytes of the
// SHA-256 of the sub (big-endian) feed a jump consistent hash (Lamping and
// Veach, 2014). Jump hash, rather than a plain modulo, keeps growth cheap:
// going from n to n+1 shards moves only about 1/(n+1) of the users, all of
// them to the new shard, where a modulo would move almost everyone.
//
// It panics when shards < 1, a configuration error that the constructors
// (NewSubscriber, and the SNS publisher) refuse first.
func ShardFor(sub string, shards int) int {
	if shards < 1 {
		panic(fmt.Sprintf("notify: shard count must be at least 1 (given %d)", shards))
	}
	h := sha256.Sum256([]byte(sub))
	return int(jumpHash(binary.BigEndian.Uint64(h[:8]), int64(shards)))
}

// jumpHash is the published algorithm, verbatim. Every floating-point step
// is an explicit conversion, which the Go spec forbids fusing, so the
// result is the same on every architecture.
func jumpHash(key uint64, buckets int64) int64 {
	var b, j int64 = -1, 0
	for j < buckets {
		b = j
		key = key*2862933555777941757 + 1
		j = int64(float64(b+1) * (float64(int64(1)<<31) / float64((key>>33)+1)))
	}
	return b
}

// TopicFor is the topic of sub's shard among topicArns (in shard order).
// The publisher and the PostAuthentication trigger both route through it,
// so a user is always notified on the topic they are subscribed on.
func TopicFor(topicArns []string, sub string) string {
	return topicArns[ShardFor(sub, len(topicArns))]
}

// FilterPolicy is the subscription filter policy that lets through only
// the messages whose userId message attribute is sub.
func FilterPolicy(sub string) string {
	b, _ := json.Marshal(map[string][]string{"userId": {sub}}) // cannot fail
	return string(b)
}

// SamePolicy reports whether two filter policies are the same JSON value
// (key order and white space do not matter). A policy that is not JSON
// equals nothing.
func SamePolicy(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}
