package unsubscribe

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Keys hands out the Signer, loading its secret on first use (a Lambda
// reads it from Secrets Manager then, not at cold start) and again after
// a failed load; a loaded Signer is kept for the process's life.
type Keys struct {
	load   func(context.Context) ([]byte, error)
	mu     sync.Mutex
	signer *Signer
}

// StaticKeys always hands out s (tests, make dev).
func StaticKeys(s *Signer) *Keys { return &Keys{signer: s} }

// LoadKeys loads the secret with load on first use.
func LoadKeys(load func(context.Context) ([]byte, error)) *Keys { return &Keys{load: load} }

// ErrNoSecret: the secret could not be loaded; nothing can be signed or
// verified until it is.
var ErrNoSecret = errors.New("the unsubscribe secret is not available")

// Signer returns the Signer, loading the secret if need be.
func (k *Keys) Signer(ctx context.Context) (*Signer, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.signer != nil {
		return k.signer, nil
	}
	if k.load == nil {
		return nil, fmt.Errorf("%w: no signer and no loader", ErrNoSecret)
	}
	b, err := k.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoSecret, err)
	}
	s, err := NewSigner(b)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoSecret, err)
	}
	k.signer = s
	return s, nil
}
