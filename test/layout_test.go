package test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/unschedule/unschedule/"

// adopterPackages are what another CDK app or function imports: the
// constructs, the item contract with its local pipeline, and the public
// clients.
var adopterPackages = []string{"../constructs/...", "../contract/...", "../futureevents/...", "../deferredjobs/..."}

// tooling is what this repository runs for itself: the simulation, the
// bench, the smoke test, the dev server and the test fixtures.
var tooling = []string{
	"cmd/", "internal/sim", "internal/bench", "internal/smoke", "internal/adapters/smokeaws",
	"internal/devserver", "internal/boltstore", "internal/testenv", "internal/testfixture", "test/",
}

// TestAdopterPackagesImportNoTooling: an adopter that imports a construct
// or the contract compiles none of the repository's tooling, so the
// tooling can change without touching what adopters build.
func TestAdopterPackagesImportNoTooling(t *testing.T) {
	args := append([]string{"list", "-deps"}, adopterPackages...)
	out, err := exec.Command("go", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	var bad []string
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		if slices.ContainsFunc(tooling, func(p string) bool { return rel == strings.TrimSuffix(p, "/") || strings.HasPrefix(rel, p) }) {
			bad = append(bad, rel)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("adopter packages import tooling %v: move what they need into a package beside the core", bad)
	}
}
