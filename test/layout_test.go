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
// constructs, the item contract and the public clients.
var adopterPackages = []string{"../constructs/...", "../contract/...", "../futureevents/...", "../deferredjobs/..."}

// testKit is the one adopter package that is a test fixture itself: it
// runs the library's pipeline on the repository's in-memory world
// (internal/tooling/memory and internal/tooling/pipeline), so it compiles
// tooling, and only tests may import it.
const testKit = module + "contract/pipelinetest"

// tooling is what this repository runs for itself: the simulation, the
// bench, the smoke test, the dev server and the test fixtures.
var tooling = []string{"cmd/", "internal/tooling/", "test/"}

// TestAdopterPackagesImportNoTooling: an adopter that imports a construct
// or the contract compiles none of the repository's tooling, so the
// tooling can change without touching what adopters build.
func TestAdopterPackagesImportNoTooling(t *testing.T) {
	out, err := exec.Command("go", append([]string{"list"}, adopterPackages...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	pkgs := slices.DeleteFunc(strings.Fields(string(out)), func(p string) bool { return p == testKit })
	out, err = exec.Command("go", append([]string{"list", "-deps"}, pkgs...)...).CombinedOutput()
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

// features are the folders of internal/, one per part of the system: the
// core's runtime, each adopter of it with its own rules, adapters and
// handlers, and the repository's tooling.
var features = []string{"core", "todo", "campaigns", "deferredjobs", "futureevents", "tooling"}

// coreMayImport is all that the core (internal/core/...) imports of the
// module beyond itself: the item contract it runs on. The rest of the
// module is the core's adopters (internal/todo, internal/campaigns,
// internal/deferredjobs, internal/futureevents and the public packages)
// and the tooling, which may import the core, never the other way round;
// the standard library and third-party modules are not the module's.
var coreMayImport = []string{"contract"}

// TestTestKitOnlyInTests: no package of the module imports the test kit
// outside its tests, so the tooling it compiles never reaches a function
// or a CDK app.
func TestTestKitOnlyInTests(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if slices.Contains(fields[1:], testKit) {
			t.Errorf("%s imports %s outside its tests: only tests may import the test kit", fields[0], testKit)
		}
	}
}

// TestInternalIsFeatureFirst: every internal package lives in one of the
// feature folders, so the tree shows the architecture (the core, its
// adopters, the tooling) and a new package has an obvious home; the core
// imports nothing of the module but itself and coreMayImport, so no
// adopter and no tooling reaches it (its tests may use the tooling: only
// the packages' own imports count).
func TestInternalIsFeatureFirst(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../internal/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		rel := strings.TrimPrefix(fields[0], module+"internal/")
		feature, _, _ := strings.Cut(rel, "/")
		if !slices.Contains(features, feature) {
			t.Errorf("internal/%s is in no feature folder: move it under internal/{%s}", rel, strings.Join(features, ","))
			continue
		}
		if feature != "core" {
			continue
		}
		for _, imp := range fields[1:] {
			r, ok := strings.CutPrefix(imp, module)
			if !ok || strings.HasPrefix(r, "internal/core/") || slices.Contains(coreMayImport, r) {
				continue
			}
			t.Errorf("internal/%s (the core) imports %s: the core imports nothing of the module but itself and %s (no adopter, no tooling); "+
				"move what it needs into internal/core, or invert the dependency behind a port", rel, r, strings.Join(coreMayImport, ", "))
		}
	}
}
