package devserver

import (
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Password hashing: PBKDF2-HMAC-SHA256, salted. The iteration count, low
// for a dev server, is stored with each hash, so raising it keeps accounts.
const (
	passwordAlg        = "pbkdf2-sha256"
	passwordIterations = 50_000
	passwordSaltLen    = 16
	passwordKeyLen     = 32
)

// The deployed user pool's password policy (constructs/userauth), as
// Cognito applies it: its symbols below, and an inner space counts as one
// (https://docs.aws.amazon.com/cognito/latest/developerguide/user-pool-settings-policies.html;
// web/src/password.ts shows the same rules).
const (
	MinPasswordLen  = 12
	MaxPasswordLen  = 256
	passwordSymbols = "^$*.[]{}()?\"!@#%&/\\,><':;|_~`=+-"
)

// passwordRules are the kinds of character a password needs: has tells
// whether r, inner when it is neither first nor last, is one.
var passwordRules = []struct {
	needs string
	has   func(r rune, inner bool) bool
}{
	{"an uppercase letter (A-Z)", func(r rune, _ bool) bool { return r >= 'A' && r <= 'Z' }},
	{"a lowercase letter (a-z)", func(r rune, _ bool) bool { return r >= 'a' && r <= 'z' }},
	{"a digit (0-9)", func(r rune, _ bool) bool { return r >= '0' && r <= '9' }},
	{"a symbol such as ! ? # or a space", func(r rune, inner bool) bool {
		return strings.ContainsRune(passwordSymbols, r) || (r == ' ' && inner)
	}},
}

// CheckPasswordPolicy returns nil when pw meets the pool's policy, and
// otherwise an error written for the person choosing it that names every
// rule it misses.
func CheckPasswordPolicy(pw string) error {
	var miss []string
	if n := utf8.RuneCountInString(pw); n < MinPasswordLen {
		miss = append(miss, fmt.Sprintf("at least %d characters", MinPasswordLen))
	} else if n > MaxPasswordLen {
		miss = append(miss, fmt.Sprintf("at most %d characters", MaxPasswordLen))
	}
	for _, rule := range passwordRules {
		found := false
		for i, r := range pw {
			found = found || rule.has(r, i > 0 && i < len(pw)-1)
		}
		if !found {
			miss = append(miss, rule.needs)
		}
	}
	if strings.HasPrefix(pw, " ") || strings.HasSuffix(pw, " ") {
		miss = append(miss, "no space at the start or end")
	}
	if len(miss) == 0 {
		return nil
	}
	return fmt.Errorf("the password needs %s", strings.Join(miss, ", "))
}

// HashPassword returns a salted hash of pw.
func HashPassword(pw string) (PasswordHash, error) {
	salt := make([]byte, passwordSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return PasswordHash{}, fmt.Errorf("password salt: %w", err)
	}
	return hashWith(pw, salt, passwordIterations)
}

func hashWith(pw string, salt []byte, iterations int) (PasswordHash, error) {
	key, err := pbkdf2.Key(sha256.New, pw, salt, iterations, passwordKeyLen)
	if err != nil {
		return PasswordHash{}, fmt.Errorf("password hash: %w", err)
	}
	return PasswordHash{Algorithm: passwordAlg, Iterations: iterations, Salt: salt, Hash: key}, nil
}

// CheckPassword reports whether pw matches h, comparing in constant time.
func CheckPassword(h PasswordHash, pw string) bool {
	if h.Algorithm != passwordAlg || h.Iterations < 1 || len(h.Salt) == 0 || len(h.Hash) != passwordKeyLen {
		return false
	}
	got, err := hashWith(pw, h.Salt, h.Iterations)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(got.Hash, h.Hash) == 1
}
