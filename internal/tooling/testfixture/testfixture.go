// Package testfixture loads the JSON event fixtures that handler tests
// keep in their testdata/ folder.
package testfixture

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Load decodes testdata/<name> into a T, failing the test on any error.
func Load[T any](t testing.TB, name string) T {
	t.Helper()
	var v T
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return v
}
