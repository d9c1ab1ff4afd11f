package test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// synthToDir runs what `make synth` runs (scripts/synth.sh: `cdk synth`,
// which runs `go run .`, then the stack list) into dir, with gofn's bundle
// cache in the folder cache, and returns a digest per file.
func synthToDir(t *testing.T, dir, cache string) map[string]string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", ".bin", "cdk")); err != nil {
		t.Fatalf("the CDK CLI is not installed: run `npm ci` in the repo root (make test does this)")
	}
	cmd := exec.Command(filepath.Join(root, "scripts", "synth.sh"), "-c", "webPlaceholder=true")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "ENV=dev", "OUT="+dir, "GOFN_CACHE="+cache,
		"PATH="+filepath.Join(root, "node_modules", ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/synth.sh: %v\n%s", err, out)
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

// TestSynthIsReproducibleAndBundlesAreSmall: two runs of `make synth`'s
// commands on an unchanged tree give byte-identical templates, manifests
// and assets (so identical asset hashes); the assembly they leave is the
// bundled one; and every zipped function bundle is at most 6 MB.
func TestSynthIsReproducibleAndBundlesAreSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the CDK CLI twice")
	}
	// The first run builds every function into an empty bundle cache; the
	// second copies them from it: identical assets also show that a cached
	// bundle is the build's.
	a, b, cache := t.TempDir(), t.TempDir(), t.TempDir()
	first, second := synthToDir(t, a, cache), synthToDir(t, b, cache)
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
	t.Run("make synth leaves the bundled assembly", func(t *testing.T) { checkBundledAssembly(t, a) })
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

// checkBundledAssembly fails unless every Lambda function of the assembly
// in dir (nested stacks included) has its code in a folder of the
// assembly, and every Go function's folder holds an executable linux/arm64
// `bootstrap`: what `cdk deploy --app dir` uploads.
func checkBundledAssembly(t *testing.T, dir string) {
	t.Helper()
	assets := map[string]string{} // asset hash -> source path
	manifests, _ := filepath.Glob(filepath.Join(dir, "*.assets.json"))
	for _, m := range manifests {
		var f struct {
			Files map[string]struct {
				Source struct{ Path, Packaging string }
			}
		}
		readJSON(t, m, &f)
		for hash, a := range f.Files {
			assets[hash] = a.Source.Path
		}
	}
	templates, _ := filepath.Glob(filepath.Join(dir, "*.template.json"))
	functions, goFunctions := 0, 0
	for _, tf := range templates {
		var tpl struct {
			Resources map[string]struct {
				Type       string
				Properties struct {
					Runtime string
					Code    struct{ S3Key any }
				}
			}
		}
		readJSON(t, tf, &tpl)
		for id, r := range tpl.Resources {
			if r.Type != "AWS::Lambda::Function" {
				continue
			}
			functions++
			key, _ := r.Properties.Code.S3Key.(string)
			src, ok := assets[strings.TrimSuffix(key, ".zip")]
			if !ok {
				t.Errorf("%s: function %s: code %v is no asset of the assembly", filepath.Base(tf), id, r.Properties.Code.S3Key)
				continue
			}
			if filepath.IsAbs(src) || strings.HasPrefix(filepath.Clean(src), "..") {
				t.Errorf("function %s: asset %s is outside the assembly: a deploy would upload that folder", id, src)
				continue
			}
			if st, err := os.Stat(filepath.Join(dir, src)); err != nil || !st.IsDir() {
				t.Errorf("function %s: asset %s is not a folder of the assembly (%v)", id, src, err)
				continue
			}
			if !strings.HasPrefix(r.Properties.Runtime, "provided.") {
				continue // CDK's own Node.js/Python helpers
			}
			goFunctions++
			checkBootstrap(t, id, filepath.Join(dir, src, "bootstrap"))
		}
	}
	t.Logf("%d functions, %d Go functions with a linux/arm64 bootstrap", functions, goFunctions)
	if goFunctions < 7 {
		t.Fatalf("found %d Go functions in %d templates, want the app's 7", goFunctions, len(templates))
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// checkBootstrap fails unless path is an executable, statically linked
// ELF64 arm64 (EM_AARCH64) program: what the provided.al2023 arm64 runtime
// runs.
func checkBootstrap(t *testing.T, fn, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Errorf("function %s: no bootstrap: %v", fn, err)
		return
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o111 == 0 {
		t.Errorf("function %s: bootstrap mode %v, want an executable file", fn, st.Mode())
	}
	f, err := elf.Open(path)
	if err != nil {
		t.Errorf("function %s: bootstrap is not an ELF program: %v", fn, err)
		return
	}
	defer f.Close()
	if f.Machine != elf.EM_AARCH64 || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC {
		t.Errorf("function %s: bootstrap is %v %v %v, want EM_AARCH64 ELFCLASS64 ET_EXEC", fn, f.Machine, f.Class, f.Type)
	}
}
