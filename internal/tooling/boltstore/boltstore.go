// Package boltstore keeps the local dev server's state in one embedded
// bbolt file: the tasks and schedules (snapshots of the in-memory
// pipeline), the local users and their notification subscriptions, the
// notification outbox, the token signing key and the reconciler's
// checkpoint, and the campaigns (campaigns.go: campaigns, send tasks,
// provisioning checkpoints, campaign schedules, the sender's receipts,
// the senders' limit counters and the suppression list). A restart reads
// it all back.
//
// Values are JSON, one bucket per kind. It imports no AWS SDK.
package boltstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/unschedule/unschedule/contract"
	"github.com/unschedule/unschedule/internal/core/reconcile"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// FileName is the database file inside the data folder.
const FileName = "unschedule.db"

// Errors of the store; test with errors.Is.
var (
	// ErrUserExists: a user with that email is already stored.
	ErrUserExists = errors.New("user already exists")
	// ErrUserNotFound: no user with that email.
	ErrUserNotFound = errors.New("user not found")
	// ErrLocked: another process holds the data folder.
	ErrLocked = errors.New("the data folder is in use by another process")
)

var (
	bucketTasks         = []byte("tasks")
	bucketSchedules     = []byte("schedules")
	bucketUsers         = []byte("users")
	bucketSubscriptions = []byte("subscriptions")
	bucketOutbox        = []byte("outbox")
	bucketMeta          = []byte("meta")
	bucketSettings      = []byte("settings")
	keyCheckpoint       = []byte("reconcile-checkpoint")
)

// buckets are every bucket Open makes sure exists.
var buckets = [][]byte{bucketTasks, bucketSchedules, bucketUsers, bucketSubscriptions, bucketOutbox, bucketMeta, bucketSettings,
	bucketCampaigns, bucketCampaignOwners, bucketCampaignTasks, bucketCampaignOpen, bucketCampaignDone,
	bucketCampaignCheckpoints, bucketCampaignTimer, bucketCampaignReceipts,
	bucketSenderLimits, bucketSuppressions}

// User is a local account: the stand-in for a Cognito user.
type User struct {
	// Sub is the user's stable id, the token's sub claim.
	Sub   string `json:"sub"`
	Email string `json:"email"`
	// Password is the salted password hash (see devserver.HashPassword).
	Password  PasswordHash `json:"password"`
	CreatedAt time.Time    `json:"createdAt"`
	// EmailVerified is set once a code sent to the address came back
	// (the local stand-in of VerifyUserAttribute); a sign-up leaves it
	// false, as an open pool's auto-confirmation does.
	EmailVerified bool `json:"emailVerified,omitempty"`
}

// PasswordHash is a salted, iterated hash of a password.
type PasswordHash struct {
	Algorithm  string `json:"alg"`
	Iterations int    `json:"iterations"`
	Salt       []byte `json:"salt"`
	Hash       []byte `json:"hash"`
}

// Subscription is a local stand-in for an SNS email subscription.
type Subscription struct {
	Arn          string `json:"arn"`
	TopicArn     string `json:"topicArn"`
	Protocol     string `json:"protocol"`
	Endpoint     string `json:"endpoint"`
	FilterPolicy string `json:"filterPolicy"`
	Confirmed    bool   `json:"confirmed"`
}

// Email is one message the app would have emailed.
type Email struct {
	// Seq numbers the outbox from 1, in append order.
	Seq  uint64    `json:"seq"`
	Kind string    `json:"kind"`
	At   time.Time `json:"at"`
	// UserID is the user the message is about (the publish's userId
	// attribute).
	UserID string `json:"userId"`
	// TaskID is set for expiry notifications.
	TaskID string `json:"taskId,omitempty"`
	// To lists the addresses it would have reached (empty: nobody).
	To      []string `json:"to"`
	Subject string   `json:"subject"`
	Body    string   `json:"body"`
	// Headers are the message's own headers as the mail would carry
	// them (a campaign email's List-Unsubscribe and
	// List-Unsubscribe-Post), in order; none for the others.
	Headers []Header `json:"headers,omitempty"`
}

// Header is one header of an email.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DB is the open store. Its methods are safe for concurrent use.
type DB struct {
	db *bolt.DB
}

// Open opens (creating if needed) the store in folder dir. It fails with
// ErrLocked after a second if another process has it open.
func Open(dir string) (*DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("boltstore: create data folder: %w", err)
	}
	path := filepath.Join(dir, FileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("boltstore: %s: %w", path, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range buckets {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return fmt.Errorf("create bucket %s: %w", b, err)
			}
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("boltstore: %w", err)
	}
	return &DB{db: db}, nil
}

// Close closes the file.
func (d *DB) Close() error { return d.db.Close() }

// Path is the database file.
func (d *DB) Path() string { return d.db.Path() }

// replace rewrites a bucket with the given keys and values.
func (d *DB) replace(bucket []byte, keys [][]byte, vals []any) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucket); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return fmt.Errorf("clear %s: %w", bucket, err)
		}
		b, err := tx.CreateBucket(bucket)
		if err != nil {
			return fmt.Errorf("create %s: %w", bucket, err)
		}
		for i, k := range keys {
			v, err := json.Marshal(vals[i])
			if err != nil {
				return fmt.Errorf("encode %s %q: %w", bucket, k, err)
			}
			if err := b.Put(k, v); err != nil {
				return fmt.Errorf("put %s %q: %w", bucket, k, err)
			}
		}
		return nil
	})
}

// getJSON decodes the value of k in b into v; found false (v untouched)
// when there is none.
func getJSON(b *bolt.Bucket, k []byte, v any) (found bool, err error) {
	raw := b.Get(k)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, fmt.Errorf("decode %q: %w", k, err)
	}
	return true, nil
}

// jsonValue decodes v, the value of k, into x; a missing value is an
// error (an index names a key its bucket lacks).
func jsonValue(k, v []byte, x any) error {
	if v == nil {
		return fmt.Errorf("decode %q: no value", k)
	}
	if err := json.Unmarshal(v, x); err != nil {
		return fmt.Errorf("decode %q: %w", k, err)
	}
	return nil
}

// putJSON encodes v as the value of k in b.
func putJSON(b *bolt.Bucket, k []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %q: %w", k, err)
	}
	if err := b.Put(k, raw); err != nil {
		return fmt.Errorf("put %q: %w", k, err)
	}
	return nil
}

// each decodes every value of a bucket, in key order, into a new T.
func each[T any](d *DB, bucket []byte) ([]T, error) {
	var out []T
	err := d.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucket).ForEach(func(k, v []byte) error {
			var x T
			if err := json.Unmarshal(v, &x); err != nil {
				return fmt.Errorf("decode %s %q: %w", bucket, k, err)
			}
			out = append(out, x)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("boltstore: %w", err)
	}
	return out, nil
}

// ReplaceTasks makes the stored tasks exactly ts.
func (d *DB) ReplaceTasks(ts []task.Task) error {
	keys := make([][]byte, len(ts))
	vals := make([]any, len(ts))
	for i, t := range ts {
		keys[i] = []byte(t.UserID + "\x00" + t.TaskID)
		vals[i] = t
	}
	if err := d.replace(bucketTasks, keys, vals); err != nil {
		return fmt.Errorf("boltstore: save tasks: %w", err)
	}
	return nil
}

// Tasks returns every stored task, ordered by user then id.
func (d *DB) Tasks() ([]task.Task, error) { return each[task.Task](d, bucketTasks) }

// ReplaceSchedules makes the stored schedules exactly ss.
func (d *DB) ReplaceSchedules(ss []contract.Schedule) error {
	keys := make([][]byte, len(ss))
	vals := make([]any, len(ss))
	for i, s := range ss {
		keys[i] = []byte(s.Name)
		vals[i] = s
	}
	if err := d.replace(bucketSchedules, keys, vals); err != nil {
		return fmt.Errorf("boltstore: save schedules: %w", err)
	}
	return nil
}

// Schedules returns every stored schedule, ordered by name.
func (d *DB) Schedules() ([]contract.Schedule, error) {
	return each[contract.Schedule](d, bucketSchedules)
}

// EmailKey is how a user's email is keyed: trimmed and in lower case, as
// a Cognito pool with case-insensitive usernames compares them.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// CreateUser stores a new user; ErrUserExists if the email is taken.
func (d *DB) CreateUser(u User) error {
	k := []byte(EmailKey(u.Email))
	v, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("boltstore: encode user: %w", err)
	}
	return d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketUsers)
		if b.Get(k) != nil {
			return ErrUserExists
		}
		if err := b.Put(k, v); err != nil {
			return fmt.Errorf("boltstore: put user: %w", err)
		}
		return nil
	})
}

// User reads a user by email; ErrUserNotFound if none.
func (d *DB) User(email string) (User, error) {
	var u User
	err := d.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketUsers).Get([]byte(EmailKey(email)))
		if v == nil {
			return ErrUserNotFound
		}
		if err := json.Unmarshal(v, &u); err != nil {
			return fmt.Errorf("boltstore: decode user: %w", err)
		}
		return nil
	})
	return u, err
}

// UserBySub reads a user by sub (a scan: the dev server holds a few
// users); ErrUserNotFound if none.
func (d *DB) UserBySub(sub string) (User, error) {
	users, err := each[User](d, bucketUsers)
	if err != nil {
		return User{}, err
	}
	for _, u := range users {
		if u.Sub == sub {
			return u, nil
		}
	}
	return User{}, ErrUserNotFound
}

// SetPassword replaces a user's password hash; ErrUserNotFound if none.
func (d *DB) SetPassword(email string, h PasswordHash) error {
	return d.updateUser(email, func(u *User) { u.Password = h })
}

// SetEmailVerified marks a user's address verified (by a code, as
// Cognito's VerifyUserAttribute does); ErrUserNotFound if none.
func (d *DB) SetEmailVerified(email string) error {
	return d.updateUser(email, func(u *User) { u.EmailVerified = true })
}

// updateUser changes one stored user in place; ErrUserNotFound if none.
func (d *DB) updateUser(email string, change func(*User)) error {
	k := []byte(EmailKey(email))
	return d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketUsers)
		v := b.Get(k)
		if v == nil {
			return ErrUserNotFound
		}
		var u User
		if err := json.Unmarshal(v, &u); err != nil {
			return fmt.Errorf("boltstore: decode user: %w", err)
		}
		change(&u)
		nv, err := json.Marshal(u)
		if err != nil {
			return fmt.Errorf("boltstore: encode user: %w", err)
		}
		if err := b.Put(k, nv); err != nil {
			return fmt.Errorf("boltstore: put user: %w", err)
		}
		return nil
	})
}

// PutSubscription stores or replaces a subscription (keyed by its ARN).
func (d *DB) PutSubscription(s Subscription) error {
	v, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("boltstore: encode subscription: %w", err)
	}
	return d.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketSubscriptions).Put([]byte(s.Arn), v); err != nil {
			return fmt.Errorf("boltstore: put subscription: %w", err)
		}
		return nil
	})
}

// DeleteSubscription removes a subscription (none is fine).
func (d *DB) DeleteSubscription(arn string) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketSubscriptions).Delete([]byte(arn)); err != nil {
			return fmt.Errorf("boltstore: delete subscription: %w", err)
		}
		return nil
	})
}

// Subscriptions returns every subscription, ordered by ARN.
func (d *DB) Subscriptions() ([]Subscription, error) {
	return each[Subscription](d, bucketSubscriptions)
}

// AppendEmail adds e to the outbox with the next sequence number, and
// returns it as stored.
func (d *DB) AppendEmail(e Email) (Email, error) {
	err := d.db.Update(func(tx *bolt.Tx) (err error) {
		e, err = appendEmail(tx, e)
		return err
	})
	return e, err
}

// appendEmail adds e to the outbox in tx.
func appendEmail(tx *bolt.Tx, e Email) (Email, error) {
	b := tx.Bucket(bucketOutbox)
	seq, err := b.NextSequence()
	if err != nil {
		return Email{}, fmt.Errorf("boltstore: outbox sequence: %w", err)
	}
	e.Seq = seq
	if err := putJSON(b, seqKey(seq), e); err != nil {
		return Email{}, fmt.Errorf("boltstore: email: %w", err)
	}
	return e, nil
}

// Outbox returns every email, oldest first.
func (d *DB) Outbox() ([]Email, error) { return each[Email](d, bucketOutbox) }

// Secret returns the named random secret of n bytes, made and stored the
// first time it is asked for, so it survives restarts.
func (d *DB) Secret(name string, n int) ([]byte, error) {
	k := []byte("secret:" + name)
	var out []byte
	err := d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketMeta)
		if v := b.Get(k); len(v) == n {
			out = bytes.Clone(v)
			return nil
		}
		out = make([]byte, n)
		if _, err := rand.Read(out); err != nil {
			return fmt.Errorf("boltstore: random secret: %w", err)
		}
		if err := b.Put(k, out); err != nil {
			return fmt.Errorf("boltstore: put secret: %w", err)
		}
		return nil
	})
	return out, err
}

var _ reconcile.Checkpoints = (*DB)(nil)

// Load implements reconcile.Checkpoints.
func (d *DB) Load(context.Context) (reconcile.Checkpoint, error) {
	var cp reconcile.Checkpoint
	err := d.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketMeta).Get(keyCheckpoint)
		if v == nil {
			return nil
		}
		if err := json.Unmarshal(v, &cp); err != nil {
			return fmt.Errorf("boltstore: decode checkpoint: %w", err)
		}
		return nil
	})
	return cp, err
}

// Save implements reconcile.Checkpoints.
func (d *DB) Save(_ context.Context, cp reconcile.Checkpoint) error {
	v, err := json.Marshal(cp)
	if err != nil {
		return fmt.Errorf("boltstore: encode checkpoint: %w", err)
	}
	return d.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Put(keyCheckpoint, v); err != nil {
			return fmt.Errorf("boltstore: put checkpoint: %w", err)
		}
		return nil
	})
}

var _ notify.SettingsStore = (*DB)(nil)

// LoadSettings implements notify.SettingsStore.
func (d *DB) LoadSettings(_ context.Context, userID string) (notify.Settings, error) {
	st := notify.Settings{UserID: userID}
	err := d.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketSettings).Get([]byte(userID))
		if v == nil {
			return nil
		}
		if err := json.Unmarshal(v, &st); err != nil {
			return fmt.Errorf("boltstore: decode settings: %w", err)
		}
		return nil
	})
	return st, err
}

// SaveSettings implements notify.SettingsStore: the version check and the
// write are one transaction.
func (d *DB) SaveSettings(_ context.Context, st notify.Settings) (notify.Settings, error) {
	err := d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSettings)
		var cur notify.Settings
		if v := b.Get([]byte(st.UserID)); v != nil {
			if err := json.Unmarshal(v, &cur); err != nil {
				return fmt.Errorf("boltstore: decode settings: %w", err)
			}
		}
		if cur.Version != st.Version {
			return fmt.Errorf("boltstore: save settings of %s: %w", st.UserID, notify.ErrSettingsConflict)
		}
		st.Version++
		st.UpdatedAt, _ = task.ParseTime(task.FormatTime(st.UpdatedAt)) // as DynamoDB stores it
		v, err := json.Marshal(st)
		if err != nil {
			return fmt.Errorf("boltstore: encode settings: %w", err)
		}
		return b.Put([]byte(st.UserID), v)
	})
	if err != nil {
		return notify.Settings{}, err
	}
	return st, nil
}
