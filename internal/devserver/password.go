package devserver

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"

	"github.com/unschedule/unschedule/internal/boltstore"
)

// Password hashing parameters: PBKDF2-HMAC-SHA256 with a 16-byte random
// salt. The iteration count is lower than a production service would use
// (a dev server signs in often on a shared machine); it is stored with
// each hash, so raising it later keeps old accounts working.
const (
	passwordAlg        = "pbkdf2-sha256"
	passwordIterations = 50_000
	passwordSaltLen    = 16
	passwordKeyLen     = 32
)

// MinPasswordLen is the shortest password accepted (Cognito's default).
const MinPasswordLen = 8

// HashPassword returns a salted hash of pw.
func HashPassword(pw string) (boltstore.PasswordHash, error) {
	salt := make([]byte, passwordSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return boltstore.PasswordHash{}, fmt.Errorf("password salt: %w", err)
	}
	return hashWith(pw, salt, passwordIterations)
}

func hashWith(pw string, salt []byte, iterations int) (boltstore.PasswordHash, error) {
	key, err := pbkdf2.Key(sha256.New, pw, salt, iterations, passwordKeyLen)
	if err != nil {
		return boltstore.PasswordHash{}, fmt.Errorf("password hash: %w", err)
	}
	return boltstore.PasswordHash{Algorithm: passwordAlg, Iterations: iterations, Salt: salt, Hash: key}, nil
}

// CheckPassword reports whether pw matches h, comparing in constant time.
func CheckPassword(h boltstore.PasswordHash, pw string) bool {
	if h.Algorithm != passwordAlg || h.Iterations < 1 || len(h.Salt) == 0 || len(h.Hash) != passwordKeyLen {
		return false
	}
	got, err := hashWith(pw, h.Salt, h.Iterations)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(got.Hash, h.Hash) == 1
}
