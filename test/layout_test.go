package test

import (
	"fmt"
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
// runs the core's pipeline in one process (internal/core/inproc, on the
// stand-ins of internal/core/inmem), and only tests may import it.
const testKit = module + "contract/pipelinetest"

// toolingDeps are the packages of the tooling (what this repository runs
// for itself: the simulation, the bench, the smoke test, the dev server,
// the test servers and fixtures; featureTooling) that the packages
// matched by patterns compile, their tests left out.
func toolingDeps(t *testing.T, patterns ...string) []string {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list"}, patterns...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	out, err = exec.Command("go", append([]string{"list", "-deps"}, strings.Fields(string(out))...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	var bad []string
	for _, pkg := range strings.Fields(string(out)) {
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		if f, _ := featureOf(rel); f == featureTooling {
			bad = append(bad, rel)
		}
	}
	return bad
}

// TestAdopterPackagesImportNoTooling: an adopter that imports a construct
// or the contract compiles none of the repository's tooling, so the
// tooling can change without touching what adopters build.
func TestAdopterPackagesImportNoTooling(t *testing.T) {
	// The test kit too: it is built from the core alone.
	if bad := toolingDeps(t, adopterPackages...); len(bad) > 0 {
		t.Fatalf("adopter packages import tooling %v: move what they need into a package beside the core", bad)
	}
}

// TestOperatorCommandImportsNoTooling: the operator's command (a product
// operators run in production) compiles none of the repository's
// tooling, through any path; its tests may use the test servers.
func TestOperatorCommandImportsNoTooling(t *testing.T) {
	if bad := toolingDeps(t, "../internal/ops/...", "../cmd/unschedule"); len(bad) > 0 {
		t.Fatalf("the operator command imports tooling %v: move what it needs into internal/ops or the core", bad)
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
// handlers, the operator's command, and the repository's tooling.
var features = []string{"core", "todo", "campaigns", "deferredjobs", "futureevents", "ops", "tooling"}

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
// adopters, the operator command, the tooling) and a new package has an
// obvious home; the core imports nothing of the module but itself and
// coreMayImport, so no adopter and no tooling reaches it (its tests may
// use the tooling: only the packages' own imports count).
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

// The features of the module, by what their packages are for. The core
// (the library: its constructs, functions, contract, test kit and
// runtime) imports only the core; an adopter imports itself and the
// core; the operator's command (a product, run in production) imports
// itself, the core and the adopters, never the tooling; the tooling and
// the apps may import anything.
const (
	featureCore         = "core"
	featureTodo         = "todo"
	featureCampaigns    = "campaigns"
	featureFutureEvents = "futureevents"
	featureDeferredJobs = "deferredjobs"
	featureOps          = "ops"
	featureTooling      = "tooling"
	featureApp          = "app"
)

// featureRoots map a package (relative to the module) to its feature by
// its longest matching root: a root ending in "/" holds its subtree, any
// other names one package.
var featureRoots = map[string]string{
	// The core: the library an adopter builds on.
	"contract":                    featureCore,
	"contract/":                   featureCore,
	"internal/core/":              featureCore,
	"constructs/scheduleonwrite":  featureCore,
	"constructs/cancellation":     featureCore,
	"constructs/reconciler":       featureCore,
	"constructs/operations":       featureCore,
	"constructs/gofn":             featureCore,
	"constructs/internal/":        featureCore,
	"lambdas/fire":                featureCore,
	"firefn":                      featureCore,
	"lambdas/streamprocessor":     featureCore,
	"lambdas/cancelworker":        featureCore,
	"lambdas/reconciler":          featureCore,
	"lambdas/ttlwatch":            featureCore,
	"internal/todo/":              featureTodo,
	"todoapp":                     featureApp, // the app's stack: a composition of the features
	"constructs/taskapi":          featureTodo,
	"constructs/userauth":         featureTodo,
	"constructs/notifications":    featureTodo,
	"constructs/webhosting":       featureTodo,
	"lambdas/api":                 featureTodo,
	"lambdas/notify":              featureTodo,
	"lambdas/todofire":            featureTodo,
	"lambdas/presignup":           featureTodo,
	"lambdas/postconfirmation":    featureTodo,
	"lambdas/postauth":            featureTodo,
	"internal/campaigns/":         featureCampaigns,
	"constructs/campaigns":        featureCampaigns,
	"lambdas/campaignapi":         featureCampaigns,
	"lambdas/campaignbounce":      featureCampaigns,
	"lambdas/campaignprogress":    featureCampaigns,
	"lambdas/campaignprovision":   featureCampaigns,
	"lambdas/campaignreconciler":  featureCampaigns,
	"lambdas/campaignsend":        featureCampaigns,
	"lambdas/campaignunsubscribe": featureCampaigns,
	"futureevents/":               featureFutureEvents,
	"internal/futureevents/":      featureFutureEvents,
	"constructs/futureevents":     featureFutureEvents,
	"lambdas/futureevent":         featureFutureEvents,
	"deferredjobs/":               featureDeferredJobs,
	"internal/deferredjobs/":      featureDeferredJobs,
	"constructs/deferredjobs":     featureDeferredJobs,
	"lambdas/deferreddispatch":    featureDeferredJobs,
	"internal/ops":                featureOps,
	"internal/ops/":               featureOps,
	"cmd/unschedule":              featureOps,
	"internal/tooling/":           featureTooling,
	"cmd/":                        featureTooling,
	"test":                        featureTooling,
	"test/":                       featureTooling,
	"":                            featureApp, // the module root: the CDK app
	"examples/":                   featureApp,
}

// featureOf is the feature of a package path relative to the module, and
// false for one no root names.
func featureOf(rel string) (string, bool) {
	best, feature := -1, ""
	for root, f := range featureRoots {
		match := rel == root || (strings.HasSuffix(root, "/") && strings.HasPrefix(rel, root))
		if match && len(root) > best {
			best, feature = len(root), f
		}
	}
	return feature, best >= 0
}

// mayImport says whether a package of feature from may import one of
// feature to.
func mayImport(from, to string) bool {
	switch from {
	case featureTooling, featureApp:
		return true
	case featureCore:
		return to == featureCore
	case featureOps:
		return to != featureTooling && to != featureApp
	}
	return to == from || to == featureCore
}

// layoutViolations are the edges of an import graph (package -> its
// imports, both relative to the module) that break mayImport, and the
// packages no feature root names, each with how to fix it.
func layoutViolations(graph map[string][]string) []string {
	var bad []string
	for pkg, imports := range graph {
		from, ok := featureOf(pkg)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s is in no feature: add it to featureRoots (test/layout_test.go)", pkg))
			continue
		}
		for _, imp := range imports {
			to, ok := featureOf(imp)
			if !ok || mayImport(from, to) {
				continue
			}
			switch from {
			case featureCore:
				bad = append(bad, fmt.Sprintf("%s (the core) imports %s (%s): the library knows no adopter and no tooling; "+
					"let the adopter pass what the core needs (its schema, view or names)", pkg, imp, to))
			case featureOps:
				bad = append(bad, fmt.Sprintf("%s (the operator command) imports %s (%s): the command operators run imports the core and the adopters, "+
					"never the tooling; move what it needs into internal/ops or the core", pkg, imp, to))
			default:
				bad = append(bad, fmt.Sprintf("%s (%s) imports %s (%s): an adopter imports only its own feature and the core; "+
					"move what both need into the core", pkg, from, imp, to))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// TestFeatureGraphRule: the rule on a synthetic graph, so a bad edge of
// each kind is shown failing.
func TestFeatureGraphRule(t *testing.T) {
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		want  []string // substrings of the violations, in order; none: clean
	}{
		{"the core on the core", map[string][]string{"constructs/scheduleonwrite": {"contract", "internal/core/envvars", "constructs/reconciler"}}, nil},
		{"a library construct importing the to-do app",
			map[string][]string{"constructs/scheduleonwrite": {"constructs/reconciler"}, "constructs/reconciler": {"internal/todo/tableschema"}},
			[]string{"constructs/reconciler (the core) imports internal/todo/tableschema (todo)"}},
		{"the test kit importing tooling", map[string][]string{"contract/pipelinetest": {"internal/tooling/pipeline"}},
			[]string{"contract/pipelinetest (the core) imports internal/tooling/pipeline (tooling)"}},
		{"a core function importing campaigns", map[string][]string{"lambdas/fire": {"internal/campaigns/campaign"}},
			[]string{"lambdas/fire (the core) imports internal/campaigns/campaign (campaigns)"}},
		{"an adopter on itself and the core", map[string][]string{"constructs/futureevents": {"futureevents/futureevent", "constructs/scheduleonwrite"}}, nil},
		{"an adopter importing another", map[string][]string{"constructs/campaigns": {"constructs/notifications"}},
			[]string{"constructs/campaigns (campaigns) imports constructs/notifications (todo)"}},
		{"an adopter importing tooling", map[string][]string{"constructs/deferredjobs": {"internal/tooling/memory"}},
			[]string{"constructs/deferredjobs (deferredjobs) imports internal/tooling/memory (tooling)"}},
		{"tooling and apps import anything", map[string][]string{"internal/tooling/sim": {"internal/todo/task", "internal/campaigns/campaign"}, "examples/jobs": {"futureevents/client"}}, nil},
		{"the operator command on the core and the adopters",
			map[string][]string{"cmd/unschedule": {"internal/ops"}, "internal/ops": {"internal/core/reconcile", "internal/campaigns/campaigncancel", "internal/todo/tableschema"},
				"internal/ops/opstest": {"internal/ops", "deferredjobs/job", "futureevents/futureevent"}}, nil},
		{"the operator command importing tooling", map[string][]string{"internal/ops/opstest": {"internal/tooling/testenv"}},
			[]string{"internal/ops/opstest (the operator command) imports internal/tooling/testenv (tooling)"}},
		{"the operator's main importing tooling", map[string][]string{"cmd/unschedule": {"internal/ops", "internal/tooling/devserver"}},
			[]string{"cmd/unschedule (the operator command) imports internal/tooling/devserver (tooling)"}},
		{"the tooling importing the operator command", map[string][]string{"internal/tooling/devserver": {"internal/ops"}}, nil},
		{"an adopter importing the operator command", map[string][]string{"internal/campaigns/campaign": {"internal/ops"}},
			[]string{"internal/campaigns/campaign (campaigns) imports internal/ops (ops)"}},
		{"a package in no feature", map[string][]string{"newthing/pkg": nil}, []string{"newthing/pkg is in no feature"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := layoutViolations(tc.graph)
			if len(got) != len(tc.want) {
				t.Fatalf("violations %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("violation %q, want it to say %q", got[i], w)
				}
			}
		})
	}
}

// TestLibraryKnowsNoAdopter: in the module's own import graph (each
// package's non-test imports), the core (the library's constructs and
// functions, the contract and its test kit, internal/core) imports no
// adopter and no tooling, and each adopter imports only itself and the
// core.
func TestLibraryKnowsNoAdopter(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0]+"/", module) // the module root: ""
		pkg = strings.TrimSuffix(pkg, "/")
		var imports []string
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				imports = append(imports, rel)
			}
		}
		graph[pkg] = slices.Clip(imports)
	}
	known := map[string]bool{}
	for _, v := range layoutViolations(graph) {
		edge := strings.Join(strings.Fields(v)[:1], "") + " -> " + importedBy(v)
		if knownViolations[edge] {
			known[edge] = true
			continue
		}
		t.Error(v)
	}
	for edge := range knownViolations {
		if !known[edge] {
			t.Errorf("%s no longer breaks the rule: remove it from knownViolations", edge)
		}
	}
}

// knownViolations are edges that break the rule today, each to be
// removed with its fix (the test fails once one is fixed, so the list
// only shrinks).
var knownViolations = map[string]bool{}

// importedBy is the imported package a violation names ("... imports X (").
func importedBy(v string) string {
	_, after, _ := strings.Cut(v, " imports ")
	imp, _, _ := strings.Cut(after, " ")
	return imp
}

// libraryPackages are the library's packages (the core under
// featureRoots, less constructs/internal, whose tests synthesize stacks):
// the constructs, the contract, internal/core, the firing function's
// library (firefn) and the Lambda mains the library's constructs bundle
// (scheduleonwrite: fire, ttlwatch; cancellation: streamprocessor,
// cancelworker; reconciler: reconciler). TestLibraryTestsReachNoAdopter
// lists them with their tests.
var libraryPackages = []string{"../internal/core/...", "../contract/...", "../constructs/scheduleonwrite/...",
	"../constructs/cancellation/...", "../constructs/reconciler/...", "../constructs/operations/...", "../constructs/gofn/...",
	"../firefn/...", "../lambdas/fire", "../lambdas/ttlwatch", "../lambdas/streamprocessor", "../lambdas/cancelworker",
	"../lambdas/reconciler"}

// testReachExempt are the library packages whose tests may reach an
// adopter, each with why.
var testReachExempt = map[string]string{
	// The timer registry's proof: a test-only fourth timer passes the
	// timer contract suite, the kit and 300 simulation seeds without
	// touching any other file. The simulation (internal/tooling/sim) runs
	// the adopters' workloads, so this one test reaches them.
	"internal/core/timerkind/fourth": "runs the simulation as the timer registry's proof",
}

// knownTestReach are library packages whose tests reach an adopter today,
// each to be removed with its fix (the test fails once one is fixed, so
// the list only shrinks).
var knownTestReach = map[string]bool{}

// testReach is, for each root package (relative to the module) not in
// exempt, the first adopter package its tests reach in graph (each node,
// a package or a test variant as `go list -deps -test` names it relative
// to the module, to its imports), with the path that reaches it.
func testReach(graph map[string][]string, roots []string, exempt map[string]string) []string {
	var bad []string
	for _, root := range roots {
		if _, ok := exempt[root]; ok {
			continue
		}
		start := root + ".test"
		from := map[string]string{start: ""}
		queue := []string{start}
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			pkg, _, _ := strings.Cut(n, " [")
			if f, ok := featureOf(pkg); ok && f != featureCore && f != featureTooling && f != featureApp {
				path := []string{pkg}
				for p := from[n]; p != ""; p = from[p] {
					q, _, _ := strings.Cut(p, " [")
					path = append([]string{q}, path...)
				}
				bad = append(bad, fmt.Sprintf("%s: its tests reach %s (%s) by %s; take the suite or fixture from the core "+
					"(a <port>test package beside its port) and run the adopter's test in the adopter's packages",
					root, pkg, f, strings.Join(path[1:], " -> ")))
				break
			}
			for _, imp := range graph[n] {
				if _, seen := from[imp]; !seen {
					from[imp] = n
					queue = append(queue, imp)
				}
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// TestTestReachRule: the rule on synthetic graphs, so a test that
// reaches an adopter is shown failing.
func TestTestReachRule(t *testing.T) {
	for _, tc := range []struct {
		name  string
		graph map[string][]string
		roots []string
		want  []string // substrings of the violations, in order; none: clean
	}{
		{"a core test on core suites", map[string][]string{
			"internal/core/cancel.test":                                {"internal/core/cancel [internal/core/cancel.test]"},
			"internal/core/cancel [internal/core/cancel.test]":         {"contract", "internal/core/timer/timertest"},
			"internal/core/timer/timertest":                            {"internal/core/timer", "contract"},
			"internal/tooling/testenv":                                 {"internal/core/armedindex"},
			"internal/core/inmem_test [internal/core/inmem.test]":      {"internal/tooling/testenv"},
			"internal/core/inmem.test":                                 {"internal/core/inmem_test [internal/core/inmem.test]"},
			"internal/core/inmem [internal/core/inmem.test]":           {"contract"},
			"internal/core/adapters/dynamo [internal/core/inmem.test]": {"contract"},
		}, []string{"internal/core/cancel", "internal/core/inmem"}, nil},
		{"a core test on the to-do store fake", map[string][]string{
			"internal/core/reconcile.test":                                {"internal/core/reconcile_test [internal/core/reconcile.test]"},
			"internal/core/reconcile_test [internal/core/reconcile.test]": {"internal/core/reconcile", "internal/tooling/memory"},
			"internal/tooling/memory":                                     {"internal/todo/task"},
		}, []string{"internal/core/reconcile"},
			[]string{"internal/core/reconcile: its tests reach internal/todo/task (todo) by internal/core/reconcile_test -> internal/tooling/memory -> internal/todo/task"}},
		{"a core test on a suite that imports the campaigns", map[string][]string{
			"contract.test":                 {"contract_test [contract.test]"},
			"contract_test [contract.test]": {"internal/tooling/testenv"},
			"internal/tooling/testenv":      {"internal/campaigns/campaign"},
		}, []string{"contract"}, []string{"contract: its tests reach internal/campaigns/campaign (campaigns)"}},
		{"the exemption, and only it", map[string][]string{
			"internal/core/timerkind/fourth.test": {"internal/tooling/sim"},
			"internal/core/timerkind/second.test": {"internal/tooling/sim"},
			"internal/tooling/sim":                {"internal/deferredjobs/jobdispatch"},
		}, []string{"internal/core/timerkind/fourth", "internal/core/timerkind/second"},
			[]string{"internal/core/timerkind/second: its tests reach internal/deferredjobs/jobdispatch (deferredjobs)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := testReach(tc.graph, tc.roots, testReachExempt)
			if len(got) != len(tc.want) {
				t.Fatalf("violations %q, want %d matching %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("violation %q, want it to say %q", got[i], w)
				}
			}
		})
	}
}

// TestLibraryTestsReachNoAdopter: the library's packages reach no adopter
// even with their tests (`go list -deps -test`): a construct, the
// contract or the core whose tests import an adopter (or tooling that
// imports one) is a bug, even when only its tests need it. The port
// suites (<port>test) are built from the core alone, so this holds; the
// one exemption is testReachExempt's.
func TestLibraryTestsReachNoAdopter(t *testing.T) {
	out, err := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}}"}, libraryPackages...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	var roots []string
	for _, p := range strings.Fields(string(out)) {
		roots = append(roots, strings.TrimPrefix(p, module))
	}
	out, err = exec.Command("go", append([]string{"list", "-deps", "-test", "-f", "{{.ImportPath}}|{{join .Imports \"|\"}}"}, libraryPackages...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps -test: %v\n%s", err, out)
	}
	rel := func(p string) string { return strings.ReplaceAll(p, module, "") }
	graph := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Split(line, "|")
		if !strings.Contains(fields[0], module) {
			continue
		}
		var imports []string
		for _, imp := range fields[1:] {
			if strings.Contains(imp, module) {
				imports = append(imports, rel(imp))
			}
		}
		graph[rel(fields[0])] = imports
	}
	if len(graph) < len(roots) {
		t.Fatalf("go list -deps -test gave %d packages for %d roots", len(graph), len(roots))
	}
	known := map[string]bool{}
	for _, v := range testReach(graph, roots, testReachExempt) {
		root, _, _ := strings.Cut(v, ":")
		if knownTestReach[root] {
			known[root] = true
			continue
		}
		t.Error(v)
	}
	for root := range knownTestReach {
		if !known[root] {
			t.Errorf("%s no longer reaches an adopter with its tests: remove it from knownTestReach", root)
		}
	}
	// An exemption that no longer reaches an adopter is one too many.
	for root := range testReachExempt {
		if len(testReach(graph, []string{root}, nil)) == 0 {
			t.Errorf("%s reaches no adopter with its tests: remove it from testReachExempt", root)
		}
	}
}
