package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NodeBin is the project's Node (node_modules/.bin, what `npm ci`
// installs), or the one on PATH. Without one the test is skipped, except
// under CI=true, where it fails.
func NodeBin(t testing.TB) string {
	t.Helper()
	if root, err := RepoRoot(); err == nil {
		local := filepath.Join(root, "node_modules", ".bin", "node")
		if _, err := os.Stat(local); err == nil {
			return local
		}
	}
	p, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no node (CI=true: required): run `npm ci` in the repo root")
		}
		t.Skip("no node: run `npm ci` in the repo root (make test does this)")
	}
	return p
}
