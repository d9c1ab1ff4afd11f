package test

import (
	"os/exec"
	"slices"
	"sort"
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

// TestPackageNamesAreUnique: no two packages of the module share a name
// (main excepted), so an import never needs an alias and a reader never
// wonders which "reconciler" a file means.
func TestPackageNamesAreUnique(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Name}} {{.ImportPath}}", "../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	byName := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, path, _ := strings.Cut(line, " ")
		if name == "main" {
			continue
		}
		byName[name] = append(byName[name], strings.TrimPrefix(path, module))
	}
	var dup []string
	for name, paths := range byName {
		if len(paths) > 1 {
			sort.Strings(paths)
			dup = append(dup, name+": "+strings.Join(paths, ", "))
		}
	}
	sort.Strings(dup)
	if len(dup) > 0 {
		t.Errorf("package names used more than once; rename all but one:\n%s", strings.Join(dup, "\n"))
	}
}
