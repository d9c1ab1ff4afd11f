package devserver

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/tooling/memory"
	"github.com/unschedule/unschedule/internal/tooling/memory/snsfake"
)

// StateFile is the saved state inside the data folder.
const StateFile = "state.json"

// Errors of the store; test with errors.Is.
var (
	ErrUserExists   = errors.New("user already exists")
	ErrUserNotFound = errors.New("user not found")
	ErrLocked       = errors.New("the data folder is in use by another process")
)

// User is a local account: the stand-in for a Cognito user.
type User struct {
	// Sub is the user's stable id, the token's sub claim.
	Sub   string `json:"sub"`
	Email string `json:"email"`
	// Password is the salted password hash (see HashPassword).
	Password  PasswordHash `json:"password"`
	CreatedAt time.Time    `json:"createdAt"`
	// EmailVerified is set once a code sent to the address came back
	// (VerifyUserAttribute); a sign-up leaves it false.
	EmailVerified bool `json:"emailVerified,omitempty"`
}

// PasswordHash is a salted, iterated hash of a password.
type PasswordHash struct {
	Algorithm  string `json:"alg"`
	Iterations int    `json:"iterations"`
	Salt       []byte `json:"salt"`
	Hash       []byte `json:"hash"`
}

// Email is one message the app would have emailed.
type Email struct {
	// Seq numbers the outbox from 1, in append order.
	Seq  uint64    `json:"seq"`
	Kind string    `json:"kind"`
	At   time.Time `json:"at"`
	// UserID is the user the message is about.
	UserID string `json:"userId"`
	// TaskID is set for expiry notifications.
	TaskID string `json:"taskId,omitempty"`
	// To lists the addresses it would have reached (empty: nobody).
	To      []string `json:"to"`
	Subject string   `json:"subject"`
	Body    string   `json:"body"`
	// Headers are a campaign email's own (List-Unsubscribe and
	// List-Unsubscribe-Post), in order.
	Headers []Header `json:"headers,omitempty"`
}

// Header is one header of an email.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// EmailKey is how a user's email is keyed: trimmed and in lower case, as
// a pool with case-insensitive usernames compares them.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// store is the dev server's state in memory: the in-memory stand-ins of
// the ports (internal/tooling/memory) and what only make dev keeps
// (local). The server saves it, with the pipeline's tasks and schedules,
// to one file (server.go).
type store struct {
	local
	reconcileCP  *inmem.Checkpoints
	settings     *memory.Settings
	campaigns    *memory.CampaignStore
	checkpoints  *memory.CampaignCheckpoints
	limits       *memory.SenderLimits
	suppressions *memory.Suppressions
	sns          *snsfake.SNS // the notification topics' subscriptions
}

func newStore(topics []string) *store {
	return &store{sns: snsfake.New(topics...), local: local{Users: map[string]User{}, Receipts: map[string]uint64{},
		Secrets: map[string][]byte{}}, reconcileCP: &inmem.Checkpoints{}, settings: memory.NewSettings(), campaigns: memory.NewCampaignStore(),
		checkpoints: memory.NewCampaignCheckpoints(), limits: memory.NewSenderLimits(), suppressions: memory.NewSuppressions()}
}

// local is what only the dev server keeps: its users (by EmailKey),
// outbox, each campaign send's outbox entry (Receipts, by idempotency
// key) and random secrets. Its methods are safe for concurrent use.
type local struct {
	mu       sync.Mutex
	Users    map[string]User   `json:"users"`
	Emails   []Email           `json:"outbox"`
	Receipts map[string]uint64 `json:"receipts"`
	Secrets  map[string][]byte `json:"secrets"`
	version  uint64            // counts the writes
}

// Version changes with every write.
func (d *local) Version() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.version
}

// localJSON is local without its methods, to encode it.
type localJSON local

func (d *local) MarshalJSON() ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return json.Marshal((*localJSON)(d))
}

func (d *local) UnmarshalJSON(b []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return json.Unmarshal(b, (*localJSON)(d))
}

// CreateUser stores a new user; ErrUserExists if the email is taken.
func (d *local) CreateUser(u User) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.Users[EmailKey(u.Email)]; ok {
		return ErrUserExists
	}
	d.version++
	d.Users[EmailKey(u.Email)] = u
	return nil
}

// User reads a user by email; ErrUserNotFound if none.
func (d *local) User(email string) (User, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	u, ok := d.Users[EmailKey(email)]
	if !ok {
		return User{}, ErrUserNotFound
	}
	return u, nil
}

// UserBySub reads a user by sub (a scan of a few users); ErrUserNotFound
// if none.
func (d *local) UserBySub(sub string) (User, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, u := range d.Users {
		if u.Sub == sub {
			return u, nil
		}
	}
	return User{}, ErrUserNotFound
}

// UpdateUser applies change to a stored user; ErrUserNotFound if none.
func (d *local) UpdateUser(email string, change func(*User)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	u, ok := d.Users[EmailKey(email)]
	if !ok {
		return ErrUserNotFound
	}
	change(&u)
	d.version++
	d.Users[EmailKey(email)] = u
	return nil
}

// AppendEmail adds e to the outbox with the next sequence number, and
// returns it as stored.
func (d *local) AppendEmail(e Email) Email {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.appendEmail(e)
}

func (d *local) appendEmail(e Email) Email {
	d.version++
	e.Seq = uint64(len(d.Emails)) + 1
	d.Emails = append(d.Emails, e)
	return e
}

// Outbox returns every email, oldest first.
func (d *local) Outbox() []Email {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.Emails)
}

// AppendEmailOnce appends e to the outbox once per key (a campaign
// send's idempotency key), in one locked write: it returns the email
// appended with key, and first true when this call appended it.
func (d *local) AppendEmailOnce(key string, e Email) (stored Email, first bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if seq, ok := d.Receipts[key]; ok {
		return d.Emails[seq-1], false
	}
	e = d.appendEmail(e)
	d.Receipts[key] = e.Seq
	return e, true
}

// EmailOnce returns the email AppendEmailOnce appended with key; found
// false if none.
func (d *local) EmailOnce(key string) (e Email, found bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if seq, ok := d.Receipts[key]; ok {
		return d.Emails[seq-1], true
	}
	return Email{}, false
}

// Secret returns the named random secret of n bytes, made at first use
// and saved with the state.
func (d *local) Secret(name string, n int) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if v := d.Secrets[name]; len(v) == n {
		return bytes.Clone(v), nil
	}
	v := make([]byte, n)
	if _, err := rand.Read(v); err != nil {
		return nil, fmt.Errorf("random secret: %w", err)
	}
	d.version++
	d.Secrets[name] = v
	return bytes.Clone(v), nil
}

// stateFile is the saved state of a data folder, locked for one process.
type stateFile struct {
	path  string
	lock  *os.File
	saved []byte
}

// openState locks dir (ErrLocked if another process holds it) and reads
// the parts saved in it.
func openState(dir string) (*stateFile, map[string]json.RawMessage, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("devserver: create data folder: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("devserver: lock data folder: %w", err)
	}
	if err := tryLock(lock); err != nil { // released when lock is closed or the process ends
		_ = lock.Close()
		return nil, nil, fmt.Errorf("devserver: %s: %w (%w)", dir, ErrLocked, err)
	}
	f := &stateFile{path: filepath.Join(dir, StateFile), lock: lock}
	parts := map[string]json.RawMessage{}
	b, err := os.ReadFile(f.path)
	if err == nil {
		err = json.Unmarshal(b, &parts)
		f.saved = b
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		_ = lock.Close()
		return nil, nil, fmt.Errorf("devserver: read %s: %w", f.path, err)
	}
	return f, parts, nil
}

// save writes b unless the file holds it: to a synced temporary file
// renamed over the state, so a crash leaves the old state or the new.
func (f *stateFile) save(b []byte) error {
	if bytes.Equal(b, f.saved) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(f.path), StateFile+".*")
	if err == nil {
		_, err = tmp.Write(b)
		err = errors.Join(err, tmp.Sync(), tmp.Close())
		if err == nil {
			err = os.Rename(tmp.Name(), f.path)
		}
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}
	if err != nil {
		return fmt.Errorf("devserver: save state: %w", err)
	}
	f.saved = b
	return nil
}

// close releases the folder.
func (f *stateFile) close() error { return f.lock.Close() }
