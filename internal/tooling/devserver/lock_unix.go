//go:build unix

package devserver

import (
	"os"
	"syscall"
)

// tryLock takes an exclusive lock on f, released when f is closed or the
// process ends (a crash leaves no stale lock), or fails at once.
func tryLock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) }
