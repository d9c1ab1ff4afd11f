package task

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"time"
)

// IDs makes task ids and schedule tokens.
type IDs interface {
	NewID(now time.Time) string
	NewToken() string
}

// crockford is the ULID alphabet: ids sort by creation time as strings.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// IDLen is the length of a task id (a ULID).
const IDLen = 26

// RandomIDs makes ULIDs and random tokens from crypto/rand.
type RandomIDs struct{}

// NewID returns a ULID: 48 bits of milliseconds, then 80 random bits.
func (RandomIDs) NewID(now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	_, _ = rand.Read(b[6:])
	return EncodeULID(b)
}

// NewToken returns 128 random bits as a ULID-alphabet string.
func (RandomIDs) NewToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return EncodeULID(b)
}

// EncodeULID renders 128 bits as 26 Crockford base32 characters.
func EncodeULID(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	out := make([]byte, IDLen)
	for i := IDLen - 1; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out)
}

// IDTime is when a task id was made (the ULID's milliseconds); ok is
// false for a string that is not a task id.
func IDTime(id string) (t time.Time, ok bool) {
	if !ValidID(id) {
		return time.Time{}, false
	}
	var ms uint64
	for i := 0; i < 10; i++ { // 10 characters: 50 bits, the first 2 always 0
		ms = ms<<5 | uint64(strings.IndexByte(crockford, id[i]))
	}
	return time.UnixMilli(int64(ms)).UTC(), true
}

// ValidID reports whether s has the shape of a task id.
func ValidID(s string) bool {
	if len(s) != IDLen || s[0] > '7' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isCrockford(s[i]) {
			return false
		}
	}
	return true
}

func isCrockford(c byte) bool {
	for i := 0; i < len(crockford); i++ {
		if crockford[i] == c {
			return true
		}
	}
	return false
}
