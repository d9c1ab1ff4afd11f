package gofn

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// BatchDir is the folder of every function package a synth may bundle:
// the first bundling of a process builds all the main packages under it
// in one `go build` (the packages compile and link in parallel, and the
// go command loads the build graph once), and each bundling then takes
// its binary. Measured in docs/PERFORMANCE.md (Synth).
const BatchDir = "lambdas"

// batch holds the binaries of one `go build -o dir/ pkg...` for the life
// of the synth process.
type batch struct {
	mu    sync.Mutex
	tried bool
	dir   string            // the go build output folder ("" when the batch build failed)
	bins  map[string]string // entry (relative to root) -> binary path in dir
	// cache and keys: the bundle cache folder and each entry's key in it
	// (nil when the cache is off or the keys could not be computed).
	cache string
	keys  map[string]string
}

// batches is per module root: one build per root and process.
var batches = struct {
	sync.Mutex
	m map[string]*batch
}{m: map[string]*batch{}}

// bundle writes the bootstrap of entry to out: the batch's binary when
// entry is one of it, else a build of entry alone (an entry outside
// BatchDir, or a batch that failed: then the error names the entry).
func bundle(goBin, root, entry, out string) error {
	batches.Lock()
	b := batches.m[root]
	if b == nil {
		b = &batch{}
		batches.m[root] = b
	}
	batches.Unlock()
	bin, last := b.take(goBin, root, entry)
	if bin == "" {
		// Handed out already (a second stack of the same process bundles
		// the same function): the cache has it.
		if b.fromCache(entry, out) {
			return nil
		}
		return Build(goBin, root, entry, out)
	}
	err := moveFile(bin, out)
	if last {
		os.RemoveAll(filepath.Dir(bin))
	}
	return err
}

// take builds the batch on the first call and returns the binary of entry
// ("" when the batch does not have it), and whether it is the last one.
// Each binary is handed out once: it is moved to the asset folder, and
// the batch folder is removed after the last.
func (b *batch) take(goBin, root, entry string) (bin string, last bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.tried {
		b.tried = true
		b.dir, b.bins, b.cache, b.keys = buildBatch(goBin, root)
	}
	key := path.Clean(filepath.ToSlash(entry))
	bin, ok := b.bins[key]
	if !ok {
		return "", false
	}
	delete(b.bins, key)
	return bin, len(b.bins) == 0
}

// fromCache copies entry's cached binary to out, and reports whether it
// could.
func (b *batch) fromCache(entry, out string) bool {
	b.mu.Lock()
	key := b.keys[path.Clean(filepath.ToSlash(entry))]
	b.mu.Unlock()
	return key != "" && cacheGet(b.cache, key, out)
}

// buildBatch builds every main package under root/BatchDir into a new
// temporary folder with the flags and environment of Build, so each
// binary is byte-identical to Build's. A package whose sources are
// unchanged since a build the bundle cache kept is copied from the cache
// instead (cache.go); the rest are built in one `go build`. On any
// failure it returns no binaries: each entry is then built alone.
func buildBatch(goBin, root string) (dir string, bins map[string]string, cache string, keys map[string]string) {
	entries, err := batchEntries(goBin, root)
	if err != nil || len(entries) < 2 {
		return "", nil, "", nil
	}
	removeStaleBatches()
	dir, err = os.MkdirTemp("", batchPrefix)
	if err != nil {
		return "", nil, "", nil
	}
	bins = map[string]string{}
	for _, e := range entries {
		bins[e] = filepath.Join(dir, path.Base(e))
	}
	cache = cacheDir()
	if cache != "" {
		if keys, err = cacheKeys(goBin, root, entries); err != nil {
			keys = nil
		}
	}
	var missing []string
	for _, e := range entries {
		if keys == nil || !cacheGet(cache, keys[e], bins[e]) {
			missing = append(missing, e)
		}
	}
	if len(missing) > 0 {
		args := append([]string{"build"}, buildFlags...)
		args = append(args, "-o", dir+string(filepath.Separator))
		for _, e := range missing {
			args = append(args, "./"+e)
		}
		cmd := exec.Command(goBin, args...)
		cmd.Dir = root
		cmd.Env = buildEnviron()
		if err := cmd.Run(); err != nil {
			os.RemoveAll(dir)
			return "", nil, "", nil
		}
		if keys != nil {
			for _, e := range missing {
				cachePut(cache, keys[e], bins[e])
			}
			cachePrune(cache)
		}
	}
	return dir, bins, cache, keys
}

// batchEntries lists the main packages under root/BatchDir ("lambdas/x"),
// or an error when two would build to the same file name.
func batchEntries(goBin, root string) ([]string, error) {
	cmd := exec.Command(goBin, "list", "-f", `{{if eq .Name "main"}}{{.Dir}}{{end}}`, "./"+BatchDir+"/...")
	cmd.Dir = root
	cmd.Env = buildEnviron()
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var entries []string
	seen := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			return nil, err
		}
		e := filepath.ToSlash(rel)
		if seen[path.Base(e)] {
			return nil, fmt.Errorf("gofn: two packages named %s under %s", path.Base(e), BatchDir)
		}
		seen[path.Base(e)] = true
		entries = append(entries, e)
	}
	return entries, nil
}

// batchPrefix names the batch folders in the temporary folder.
const batchPrefix = "gofn-batch-"

// removeStaleBatches removes batch folders that a synth process left (its
// app used only some of the packages) more than an hour ago.
func removeStaleBatches() {
	old, _ := filepath.Glob(filepath.Join(os.TempDir(), batchPrefix+"*"))
	for _, d := range old {
		if st, err := os.Stat(d); err == nil && time.Since(st.ModTime()) > time.Hour {
			os.RemoveAll(d)
		}
	}
}

// moveFile moves src to dst, copying when they are on different file
// systems.
func moveFile(src, dst string) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("gofn: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return fmt.Errorf("gofn: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("gofn: copy %s: %w", filepath.Base(src), err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("gofn: %w", err)
	}
	return os.Remove(src)
}
