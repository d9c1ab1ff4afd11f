//go:build !unix

package devserver

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir opens dir's lock file. Off Unix nothing stops a second
// server on the same folder: run one per folder.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("devserver: lock data folder: %w", err)
	}
	return f, nil
}
