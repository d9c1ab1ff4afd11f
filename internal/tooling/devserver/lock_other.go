//go:build !unix

package devserver

import "os"

// tryLock does nothing off Unix: nothing stops a second server on the
// same folder there, so run one per folder.
func tryLock(*os.File) error { return nil }
