// Package pagecursor seals the page cursors an API hands out, so that a
// cursor is opaque and tamper-evident: the store's position (a key, an
// offset, a shard and key) is encrypted and authenticated with
// AES-256-GCM under a key derived from one secret, with the query it
// belongs to (route, owner, filters) as additional data. A cursor that
// this API did not hand out for this query — damaged, cut short, forged,
// another user's, another list's, or sealed under an older secret — does
// not open: the API answers 400 naming cursor instead of reading from
// wherever it points. It imports only the standard library; the key
// comes from the caller (a Secrets Manager secret in AWS, a key kept in
// the data folder under make dev: docs/decisions/page-cursors.md).
package pagecursor

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
)

// MinSecretBytes is the shortest secret New accepts (256 bits).
const MinSecretBytes = 32

// version is the first byte of every cursor: a change of the format or
// of the key derivation takes a new one, and older cursors stop opening.
const version byte = 1

// ErrInvalid: the cursor was not sealed by this key for this query.
var ErrInvalid = errors.New("page cursor is not valid")

// Scope is the query a cursor belongs to: a cursor opens only for the
// same route, owner and filter it was sealed for.
type Scope struct {
	// Route is the API route (such as "/campaigns/{id}").
	Route string
	// Owner is the caller: the token's sub.
	Owner string
	// Filter is what else selects the list (such as the campaign id of
	// its sends); "" when nothing does.
	Filter string
}

// aad is the scope, each part length-prefixed so no two scopes encode
// alike.
func (s Scope) aad() []byte {
	out := []byte{version}
	for _, p := range []string{s.Route, s.Owner, s.Filter} {
		out = binary.AppendUvarint(out, uint64(len(p)))
		out = append(out, p...)
	}
	return out
}

// Sealer seals and opens cursors. It is safe for concurrent use.
type Sealer struct {
	mu   sync.Mutex
	aead cipher.AEAD
	load func(context.Context) ([]byte, error)
}

// New returns a Sealer whose key is derived (HKDF-SHA256) from secret,
// at least MinSecretBytes long.
func New(secret []byte) (*Sealer, error) {
	aead, err := newAEAD(secret)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Lazy returns a Sealer that reads its secret with load the first time
// a cursor is sealed or opened (a function that lists nothing never
// reads it); a failed read is tried again at the next use.
func Lazy(load func(context.Context) ([]byte, error)) *Sealer {
	return &Sealer{load: load}
}

// NewRandom returns a Sealer with a fresh random key: its cursors open
// only in this process (tests, the simulation), never across the
// instances of a deployed function.
func NewRandom() *Sealer {
	s, err := New([]byte(rand.Text() + rand.Text()))
	if err != nil {
		panic(err) // 52 random characters always make a key
	}
	return s
}

func newAEAD(secret []byte) (cipher.AEAD, error) {
	if len(secret) < MinSecretBytes {
		return nil, fmt.Errorf("pagecursor: the secret is %d bytes; at least %d are needed", len(secret), MinSecretBytes)
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "unschedule page cursor v1", 32)
	if err != nil {
		return nil, fmt.Errorf("pagecursor: derive the key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("pagecursor: %w", err)
	}
	// A random 96-bit nonce per cursor, prepended by the AEAD itself.
	return cipher.NewGCMWithRandomNonce(block)
}

// key returns the AEAD, reading the secret if need be.
func (c *Sealer) key(ctx context.Context) (cipher.AEAD, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aead != nil {
		return c.aead, nil
	}
	if c.load == nil {
		return nil, errors.New("pagecursor: no key and no loader")
	}
	secret, err := c.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("pagecursor: load the secret: %w", err)
	}
	aead, err := newAEAD(secret)
	if err != nil {
		return nil, err
	}
	c.aead = aead
	return aead, nil
}

// Seal returns the cursor of position for the query s; "" stays ""
// (the last page has no cursor). An error means the key could not be
// read (an internal error, not the caller's).
func (c *Sealer) Seal(ctx context.Context, s Scope, position string) (string, error) {
	if position == "" {
		return "", nil
	}
	aead, err := c.key(ctx)
	if err != nil {
		return "", err
	}
	out := aead.Seal([]byte{version}, nil, []byte(position), s.aad())
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// Open returns the position sealed in cursor for the query s; "" opens
// to "" (the first page). Anything else that Seal did not return for s
// is ErrInvalid; another error means the key could not be read.
func (c *Sealer) Open(ctx context.Context, s Scope, cursor string) (string, error) {
	if cursor == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(b) < 1 || b[0] != version {
		return "", ErrInvalid
	}
	aead, err := c.key(ctx)
	if err != nil {
		return "", err
	}
	pos, err := aead.Open(nil, nil, b[1:], s.aad())
	if err != nil || len(pos) == 0 {
		return "", ErrInvalid
	}
	return string(pos), nil
}

// Problem is the message of the 400 an API answers for a cursor that
// does not open (its field is cursor).
const Problem = "cursor is not one this API handed out for this list: pass the previous page's cursor unchanged, or leave cursor out to start from the first page"
