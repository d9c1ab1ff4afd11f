package memory

import (
	"context"
	"fmt"

	"github.com/unschedule/unschedule/internal/core/inmem"
	"github.com/unschedule/unschedule/internal/todo/notify"
	"github.com/unschedule/unschedule/internal/todo/task"
)

// Settings is a notify.SettingsStore in memory, kept apart from the
// tasks: like the DynamoDB item under a reserved key, it is never listed,
// counted or fed to the change feed as a task.
type Settings struct {
	savedMap[notify.Settings]
	// Fail, when set, is called before each operation; a non-nil error is
	// returned instead of doing it (fault injection).
	Fail func(op string) error
}

var _ notify.SettingsStore = (*Settings)(nil)

// NewSettings returns an empty settings store.
func NewSettings() *Settings {
	return &Settings{savedMap: savedMap[notify.Settings]{m: map[string]notify.Settings{}}}
}

// LoadSettings implements notify.SettingsStore.
func (s *Settings) LoadSettings(_ context.Context, userID string) (notify.Settings, error) {
	if err := inmem.Inject(s.Fail, "LoadSettings"); err != nil {
		return notify.Settings{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.m[userID]; ok {
		return st, nil
	}
	return notify.Settings{UserID: userID}, nil
}

// SaveSettings implements notify.SettingsStore.
func (s *Settings) SaveSettings(_ context.Context, st notify.Settings) (notify.Settings, error) {
	if err := inmem.Inject(s.Fail, "SaveSettings"); err != nil {
		return notify.Settings{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[st.UserID].Version != st.Version {
		return notify.Settings{}, fmt.Errorf("save notification settings of %s: %w", st.UserID, notify.ErrSettingsConflict)
	}
	st.Version++
	st.UpdatedAt, _ = task.ParseTime(task.FormatTime(st.UpdatedAt)) // as DynamoDB stores it
	s.m[st.UserID] = st
	return st, nil
}
