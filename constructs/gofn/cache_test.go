package gofn

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBundleCache: a second bundling of unchanged sources builds nothing
// and gives the same bytes; a change to a function's own package, or to a
// package of the module it imports, rebuilds that function only; with the
// cache off every function is built.
func TestBundleCache(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("these tests need the go command")
	}
	root := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("lambdas/a/main.go", "package main\n\nfunc main() { println(\"a\") }\n")
	write("lambdas/b/main.go", "package main\n\nimport \"example.com/m/internal/x\"\n\nfunc main() { println(x.V) }\n")
	write("internal/x/x.go", "package x\n\nconst V = \"b\"\n")

	// A go command that records the packages of each `go build`.
	log := filepath.Join(t.TempDir(), "builds")
	wrapper := filepath.Join(t.TempDir(), "go")
	script := "#!/bin/sh\nif [ \"$1\" = build ]; then echo \"$@\" | tr ' ' '\\n' | grep '^\\./' | sort | tr '\\n' ' ' >> " + log +
		"; echo >> " + log + "; fi\nexec " + goBin + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(CacheEnv, t.TempDir())
	run := func() (built string, bins map[string][]byte) {
		t.Helper()
		os.Remove(log)
		dir, paths, _, _ := buildBatch(wrapper, root)
		if dir == "" {
			t.Fatal("the batch failed")
		}
		defer os.RemoveAll(dir)
		bins = map[string][]byte{}
		for e, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			bins[e] = b
		}
		b, _ := os.ReadFile(log)
		return strings.TrimSpace(string(b)), bins
	}

	built, first := run()
	if built != "./lambdas/a ./lambdas/b" {
		t.Fatalf("first bundling built %q, want both functions in one build", built)
	}
	built, second := run()
	if built != "" {
		t.Fatalf("unchanged sources: built %q, want nothing", built)
	}
	for e := range first {
		if !bytes.Equal(first[e], second[e]) {
			t.Errorf("%s: the cached binary differs from the build", e)
		}
	}
	write("lambdas/a/main.go", "package main\n\nfunc main() { println(\"a2\") }\n")
	if built, _ = run(); built != "./lambdas/a" {
		t.Errorf("after a change to lambdas/a: built %q, want ./lambdas/a only", built)
	}
	write("internal/x/x.go", "package x\n\nconst V = \"b2\"\n")
	if built, _ = run(); built != "./lambdas/b" {
		t.Errorf("after a change to internal/x (imported by b): built %q, want ./lambdas/b only", built)
	}
	if built, _ = run(); built != "" {
		t.Errorf("unchanged again: built %q, want nothing", built)
	}
	// A second stack of the same synth process bundles a function whose
	// binary was handed out already: it comes from the cache.
	os.Remove(log)
	t.Cleanup(removeBatches)
	for _, e := range []string{"lambdas/a", "lambdas/b", "lambdas/a"} {
		out := filepath.Join(t.TempDir(), "bootstrap")
		if err := bundle(wrapper, root, e, out); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(out); err != nil || st.Size() == 0 {
			t.Fatalf("bundle %s: no bootstrap (%v)", e, err)
		}
	}
	if b, _ := os.ReadFile(log); strings.TrimSpace(string(b)) != "" {
		t.Errorf("bundling a function twice in one process built %q, want nothing", b)
	}
	t.Setenv(CacheEnv, "off")
	if built, _ = run(); built != "./lambdas/a ./lambdas/b" {
		t.Errorf("cache off: built %q, want both", built)
	}
}
