package test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// synthToDir runs the real CLI path (`cdk synth`, which runs `go run .`)
// into dir and returns a digest per file.
func synthToDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	cdk := filepath.Join(root, "node_modules", ".bin", "cdk")
	if _, err := os.Stat(cdk); err != nil {
		t.Fatalf("the CDK CLI is not installed: run `npm ci` in the repo root (make test does this)")
	}
	cmd := exec.Command(cdk, "synth", "--quiet", "-c", "env=dev", "-c", "webPlaceholder=true", "-o", dir)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PATH="+filepath.Join(root, "node_modules", ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cdk synth: %v\n%s", err, out)
	}
	digests := map[string]string{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == "performance-counters.json" {
			return nil // the CLI's own synth timings, not part of the assembly
		}
		sum := sha256.Sum256(b)
		digests[rel] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return digests
}

// TestSynthIsReproducibleAndBundlesAreSmall: two synths of an unchanged
// tree give byte-identical templates, manifests and assets (so identical
// asset hashes), and every zipped function bundle is at most 6 MB.
func TestSynthIsReproducibleAndBundlesAreSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CDK CLI twice")
	}
	a, b := t.TempDir(), t.TempDir()
	first, second := synthToDir(t, a), synthToDir(t, b)
	var diff []string
	for f, h := range first {
		if second[f] != h {
			diff = append(diff, f)
		}
	}
	for f := range second {
		if _, ok := first[f]; !ok {
			diff = append(diff, f)
		}
	}
	sort.Strings(diff)
	if len(diff) > 0 {
		t.Fatalf("two synths differ in %d files: %v", len(diff), diff)
	}
	templates, bundles := 0, 0
	for f := range first {
		if strings.HasSuffix(f, ".template.json") {
			templates++
		}
		if filepath.Base(f) != "bootstrap" {
			continue
		}
		bundles++
		size := zippedSize(t, filepath.Join(a, f))
		t.Logf("bundle %s: %.2f MB zipped", filepath.Dir(f), float64(size)/1e6)
		if size > 6_000_000 {
			t.Errorf("bundle %s is %d bytes zipped, over 6 MB", f, size)
		}
	}
	if templates == 0 || bundles < 4 {
		t.Fatalf("synth wrote %d templates and %d bundles", templates, bundles)
	}
}

func zippedSize(t *testing.T, path string) int {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("bootstrap")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(w, f); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Len()
}
