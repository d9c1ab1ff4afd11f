package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// InstallRIE returns the path of the Lambda Runtime Interface Emulator in
// root/bin, installing it there first (go install RIEModule, from the Go
// module proxy) when it is absent.
func InstallRIE(goBin, root string) (string, error) {
	rie := filepath.Join(root, "bin", "aws-lambda-rie")
	if _, err := os.Stat(rie); err == nil {
		return rie, nil
	}
	cmd := exec.Command(goBin, "install", RIEModule)
	cmd.Env = append(os.Environ(), "GOBIN="+filepath.Join(root, "bin"), "GOFLAGS=-mod=mod")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go install %s: %w\n%s", RIEModule, err, b)
	}
	return rie, nil
}

// SyncBuffer collects an emulator's stdout and stderr, which it writes
// from two goroutines, while another goroutine reads it.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write implements io.Writer.
func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Bytes is a copy of what was written so far.
func (b *SyncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...)
}

// String is what was written so far.
func (b *SyncBuffer) String() string { return string(b.Bytes()) }
