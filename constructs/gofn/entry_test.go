package gofn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// consumerModule writes a module example.com/jobs with a main package
// target/ and a nested folder, and returns its root.
func consumerModule(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":              "module example.com/jobs // the consumer\n\ngo 1.26\n",
		"target/main.go":      "package main\n\nfunc main() {}\n",
		"target/deep/x.txt":   "",
		"notapackage.txt":     "",
		"cdk/app/placeholder": "",
		"nested/go.mod":       "module \"example.com/nested\"\n",
		"nested/fn/main.go":   "package main\n\nfunc main() {}\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestResolveEntry: a relative Entry or an import path is found in the
// module of the working directory (the nearest go.mod at or above it) or
// of ModuleRoot; the library's own constructs keep the library's root.
func TestResolveEntry(t *testing.T) {
	consumer := consumerModule(t)
	lib := ModuleRoot()
	const adopter = "example.com/jobs.NewJobsStack"
	const construct = ModulePath + "/constructs/scheduleonwrite.NewScheduleOnWrite"
	for _, tc := range []struct {
		name, entry, moduleRoot, caller, wd string
		wantRoot, wantRel                   string
	}{
		{"folder in the working directory's module", "target", "", adopter, consumer, consumer, "target"},
		{"./folder", "./target", "", adopter, consumer, consumer, "target"},
		{"import path in the module", "example.com/jobs/target", "", adopter, consumer, consumer, "target"},
		{"working directory below the root: go.mod found above", "target", "", adopter, filepath.Join(consumer, "cdk", "app"), consumer, "target"},
		{"main package at the module root", "example.com/jobs", "", adopter, consumer, consumer, "."},
		{"caller in package main", "target", "", "main.main", consumer, consumer, "target"},
		{"ModuleRoot wins over the working directory", "fn", filepath.Join(consumer, "nested"), adopter, consumer, filepath.Join(consumer, "nested"), "fn"},
		{"quoted module path", "example.com/nested/fn", filepath.Join(consumer, "nested"), adopter, consumer, filepath.Join(consumer, "nested"), "fn"},
		{"the library's constructs build from the library", "lambdas/fire", "", construct, consumer, lib, "lambdas/fire"},
		{"the library's closures too", "lambdas/fire", "", ModulePath + "/constructs/campaigns.NewCampaigns.func1", consumer, lib, "lambdas/fire"},
		{"the library's tests and examples too", "examples/barbershop/worker", "", ModulePath + "/test.TestX", consumer, lib, "examples/barbershop/worker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, rel, err := resolveEntry(tc.entry, tc.moduleRoot, tc.caller, tc.wd)
			if err != nil {
				t.Fatal(err)
			}
			if root != tc.wantRoot || rel != tc.wantRel {
				t.Fatalf("resolveEntry(%q) = %s, %s; want %s, %s", tc.entry, root, rel, tc.wantRoot, tc.wantRel)
			}
		})
	}
}

// TestResolveEntryErrors: a bad Entry or ModuleRoot says, in lower case
// after the prop name, what was given and how to fix it.
func TestResolveEntryErrors(t *testing.T) {
	consumer := consumerModule(t)
	noModule := t.TempDir()
	if _, err := findModuleRoot(noModule); err == nil {
		t.Skipf("%s is inside a Go module", noModule)
	}
	const adopter = "example.com/jobs.NewJobsStack"
	for _, tc := range []struct {
		name, entry, moduleRoot, wd string
		want                        []string
	}{
		{"a library folder named from an adopter's module", "lambdas/fire", "", consumer,
			[]string{`Entry "lambdas/fire" is not a package folder of module example.com/jobs (root ` + consumer + `)`, "give the folder of a main package relative to that root, or its import path (example.com/jobs/<folder>)", "set ModuleRoot"}},
		{"a file, not a folder", "notapackage.txt", "", consumer,
			[]string{`Entry "notapackage.txt" is not a package folder of module example.com/jobs`}},
		{"an import path of another module", "example.com/other/target", "", consumer,
			[]string{`Entry "example.com/other/target" is not a package folder of module example.com/jobs`, "set ModuleRoot to the root of the module that holds it"}},
		{"outside the root", "../target", "", consumer,
			[]string{`Entry "../target" is outside the module root ` + consumer, "give a package folder under it"}},
		{"absolute", filepath.Join(consumer, "target"), "", consumer,
			[]string{`Entry "` + filepath.Join(consumer, "target") + `" is an absolute path`, "relative to the module root " + consumer + ", or its import path (example.com/jobs/<folder>)"}},
		{"no module above the working directory", "target", "", noModule,
			[]string{"no go.mod in " + noModule + " or any folder above it", "run cdk synth inside your Go module, or set ModuleRoot"}},
		{"ModuleRoot without go.mod", "target", noModule, consumer,
			[]string{`ModuleRoot "` + noModule + `" holds no go.mod`, "set it to the folder of your module's go.mod"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, rel, err := resolveEntry(tc.entry, tc.moduleRoot, adopter, tc.wd)
			if err == nil {
				t.Fatalf("resolveEntry(%q) = %s, %s; want an error", tc.entry, root, rel)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// TestInLibrary: only this module's code (not a module whose path merely
// starts with the same letters) is the library.
func TestInLibrary(t *testing.T) {
	for fn, want := range map[string]bool{
		ModulePath + "/constructs/cancellation.NewCancellation": true,
		ModulePath + "/test.TestSynth.func2":                    true,
		ModulePath + ".Root":                                    true,
		ModulePath + "-extras/constructs.New":                   false,
		"main.NewJobsStack":                                     false,
		"example.com/jobs/stack.NewStack":                       false,
		"":                                                      false,
	} {
		t.Run(fn, func(t *testing.T) {
			if got := inLibrary(fn); got != want {
				t.Errorf("inLibrary(%q) = %v, want %v", fn, got, want)
			}
		})
	}
}

// TestCallerOutside: the frames of this package are skipped (a test of
// the package is itself in it, so its caller is the testing package).
func TestCallerOutside(t *testing.T) {
	if got := callerOutside(); got != "testing.tRunner" {
		t.Fatalf("callerOutside() = %q, want testing.tRunner", got)
	}
}
