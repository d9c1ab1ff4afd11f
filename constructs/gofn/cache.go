package gofn

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The bundle cache keeps each function's bootstrap under a key computed
// from everything its build reads: the go command's version and settings,
// gofn's flags and environment, the module's go.mod, the contents of the
// source files (and embedded files) of every package of the module it
// imports, and the version of every other module it imports. A synth of
// unchanged sources then copies the binary instead of running `go build`:
// the binary, and so the asset hash (the hash of the output), is the same
// as a fresh build's (gofn's builds are reproducible: -trimpath, no build
// id, no VCS stamp).
//
// CacheEnv names the variable that moves the cache (a folder) or turns it
// off ("off"). Default: gofn under the user's cache folder
// (os.UserCacheDir, e.g. ~/.cache/unschedule-gofn).
const CacheEnv = "GOFN_CACHE"

// cacheMaxAge: an entry not used for this long is removed.
const cacheMaxAge = 7 * 24 * time.Hour

// cacheDir is the cache folder, or "" when the cache is off.
func cacheDir() string {
	v := os.Getenv(CacheEnv)
	switch v {
	case "off":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "unschedule-gofn")
	}
	return v
}

// listTemplate prints, per package of the build graph: its import path,
// folder, module (path@version, or "main" for a module without a version:
// the main module or a local replacement), whether it is in the standard
// library, its source and embedded files, and its dependencies.
const listTemplate = `{{.ImportPath}}` + "\t" + `{{.Dir}}` + "\t" +
	`{{with .Module}}{{if .Replace}}{{if .Replace.Version}}{{.Replace.Path}}@{{.Replace.Version}}{{else}}main{{end}}{{else if .Version}}{{.Path}}@{{.Version}}{{else}}main{{end}}{{end}}` + "\t" +
	`{{.Standard}}` + "\t" +
	`{{join .GoFiles ","}},{{join .CgoFiles ","}},{{join .SFiles ","}},{{join .EmbedFiles ","}}` + "\t" +
	`{{join .Deps ","}}`

// cacheKeys returns the cache key of each entry (relative to root, as
// batchEntries gives them), from one `go list -deps` of them with gofn's
// tags and environment.
func cacheKeys(goBin, root string, entries []string) (map[string]string, error) {
	env := exec.Command(goBin, "env", "GOVERSION", "GOEXPERIMENT", "GOARM64", "GOAMD64", "GOROOT")
	env.Dir = root
	env.Env = buildEnviron()
	goEnv, err := env.Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return nil, err
	}
	args := []string{"list", "-deps", "-f", listTemplate}
	args = append(args, buildTags()...)
	for _, e := range entries {
		args = append(args, "./"+e)
	}
	list := exec.Command(goBin, args...)
	list.Dir = root
	list.Env = buildEnviron()
	out, err := list.Output()
	if err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	type pkg struct {
		dir, mod string
		std      bool
		files    []string
		deps     []string
	}
	pkgs := map[string]pkg{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 6 {
			return nil, fmt.Errorf("go list: unexpected line %q", sc.Text())
		}
		p := pkg{dir: f[1], mod: f[2], std: f[3] == "true"}
		for _, x := range strings.Split(f[4], ",") {
			if x != "" {
				p.files = append(p.files, x)
			}
		}
		if f[5] != "" {
			p.deps = strings.Split(f[5], ",")
		}
		pkgs[f[0]] = p
	}
	// Each package's own hash: nothing for the standard library (the
	// go version covers it), the module version for a versioned module
	// (the module cache is read-only), else its files' contents.
	own := map[string]string{}
	pkgHash := func(path string) (string, error) {
		if h, ok := own[path]; ok {
			return h, nil
		}
		p, ok := pkgs[path]
		if !ok {
			return "", fmt.Errorf("go list: no package %s", path)
		}
		h := sha256.New()
		switch {
		case p.std:
		case p.mod != "main" && p.mod != "":
			fmt.Fprintf(h, "module %s\n", p.mod)
		default:
			files := append([]string(nil), p.files...)
			sort.Strings(files)
			for _, name := range files {
				b, err := os.ReadFile(filepath.Join(p.dir, name))
				if err != nil {
					return "", err
				}
				fmt.Fprintf(h, "file %s %d\n", name, len(b))
				h.Write(b)
			}
		}
		s := hex.EncodeToString(h.Sum(nil))
		own[path] = s
		return s, nil
	}
	keys := map[string]string{}
	for _, e := range entries {
		var path string
		for ip, p := range pkgs {
			if rel, err := filepath.Rel(root, p.dir); err == nil && filepath.ToSlash(rel) == e {
				path = ip
			}
		}
		if path == "" {
			return nil, fmt.Errorf("go list: no package in %s", e)
		}
		h := sha256.New()
		fmt.Fprintf(h, "gofn cache v1\nentry %s\nflags %q\nenv %q\ngo %s\ngo.mod %x\n", e, buildFlags, buildEnviron4Key(), goEnv, sha256.Sum256(gomod))
		all := append([]string{path}, pkgs[path].deps...)
		sort.Strings(all)
		for _, d := range all {
			ph, err := pkgHash(d)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(h, "%s %s\n", d, ph)
		}
		keys[e] = hex.EncodeToString(h.Sum(nil))
	}
	return keys, nil
}

// buildEnviron4Key is the part of the build environment gofn sets.
func buildEnviron4Key() []string {
	keys := make([]string, 0, len(buildEnv))
	for k := range buildEnv {
		keys = append(keys, k+"="+buildEnv[k])
	}
	sort.Strings(keys)
	return keys
}

// buildTags are the -tags of buildFlags, for go list.
func buildTags() []string {
	for i, f := range buildFlags {
		if f == "-tags" && i+1 < len(buildFlags) {
			return []string{"-tags", buildFlags[i+1]}
		}
	}
	return nil
}

// cachedPath is where the binary of key is kept.
func cachedPath(dir, key string) string { return filepath.Join(dir, key[:2], key, "bootstrap") }

// cacheGet copies the cached binary of key to out and reports whether
// there was one (a hit also marks the entry as used).
func cacheGet(dir, key, out string) bool {
	src := cachedPath(dir, key)
	if err := copyFile(src, out); err != nil {
		return false
	}
	now := time.Now()
	_ = os.Chtimes(filepath.Dir(src), now, now)
	return true
}

// cachePut stores bin under key (best effort: a cache that cannot be
// written only costs the next build), then removes entries unused for
// cacheMaxAge.
func cachePut(dir, key, bin string) {
	dst := cachedPath(dir, key)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return
	}
	tmp := dst + ".tmp" + fmt.Sprint(os.Getpid())
	if err := copyFile(bin, tmp); err != nil {
		os.Remove(tmp)
		return
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
	}
}

// cachePrune removes the entries of dir not used for cacheMaxAge.
func cachePrune(dir string) {
	entries, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	for _, e := range entries {
		if st, err := os.Stat(e); err == nil && st.IsDir() && time.Since(st.ModTime()) > cacheMaxAge {
			os.RemoveAll(e)
		}
	}
}

// copyFile copies src to dst (mode 0755), replacing dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
