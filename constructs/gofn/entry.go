package gofn

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// packagePath is this package's import path: frames of its functions are
// skipped when looking for the code that calls NewFunction.
const packagePath = ModulePath + "/constructs/gofn"

// resolveEntry finds the module that holds entry and the package folder
// relative to its root (slash-separated, "." for the root itself).
// moduleRoot is the ModuleRoot prop; when empty, a caller inside this
// library (its constructs name their own lambdas/ packages) gets the
// library's root, and any other caller the module holding wd.
func resolveEntry(entry, moduleRoot, caller, wd string) (root, rel string, err error) {
	root = moduleRoot
	switch {
	case root != "":
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
			return "", "", fmt.Errorf("ModuleRoot %q holds no go.mod: set it to the folder of your module's go.mod, or leave it empty for the module of the working directory", root)
		}
	case inLibrary(caller):
		root = ModuleRoot()
	default:
		if root, err = findModuleRoot(wd); err != nil {
			return "", "", err
		}
	}
	modPath, err := modulePathOf(root)
	if err != nil {
		return "", "", err
	}
	if filepath.IsAbs(entry) {
		return "", "", fmt.Errorf("the Entry %q is an absolute path: give the package folder relative to the module root %s, or its import path (%s/<folder>)", entry, root, modPath)
	}
	rel = path.Clean(filepath.ToSlash(entry))
	if rel == modPath {
		rel = "."
	} else if r, ok := strings.CutPrefix(rel, modPath+"/"); ok {
		rel = r
	}
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", "", fmt.Errorf("the Entry %q is outside the module root %s: give a package folder under it, or set ModuleRoot to the root of the module that holds it", entry, root)
	}
	if st, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); err != nil || !st.IsDir() {
		return "", "", fmt.Errorf("the Entry %q is not a package folder of module %s (root %s): give the folder of a main package relative to that root, or its import path (%s/<folder>), or set ModuleRoot to the root of the module that holds it", entry, modPath, root, modPath)
	}
	return root, rel, nil
}

// inLibrary reports whether fn (a fully qualified function name, as
// runtime.Frame.Function gives it, with or without -trimpath) is code of
// this library.
func inLibrary(fn string) bool {
	return strings.HasPrefix(fn, ModulePath+"/") || strings.HasPrefix(fn, ModulePath+".")
}

// callerOutside is the function name of the nearest caller outside this
// package.
func callerOutside() string {
	pcs := make([]uintptr, 32)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, packagePath+".") || !more {
			return f.Function
		}
	}
}

// WorkingModuleRoot is the root of the module that holds the working
// directory (that of cdk synth): the nearest folder at or above it with a
// go.mod. A construct of this library that builds an adopter's package
// passes it as ModuleRoot, as NewFunction would for the adopter's own
// call.
func WorkingModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("gofn: %w", err)
	}
	return findModuleRoot(wd)
}

// findModuleRoot is the nearest folder at or above dir holding a go.mod:
// the main module the go command would use there.
func findModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("gofn: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		if st, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && !st.IsDir() {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or any folder above it: run cdk synth inside your Go module, or set ModuleRoot to the folder of its go.mod", dir)
		}
	}
}

// modulePathOf reads the module path from root's go.mod.
func modulePathOf(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", fmt.Errorf("gofn: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		f := strings.Fields(line)
		if len(f) != 2 || f[0] != "module" {
			continue
		}
		if p, err := strconv.Unquote(f[1]); err == nil {
			return p, nil
		}
		return f[1], nil
	}
	return "", errors.New("gofn: " + filepath.Join(root, "go.mod") + " has no module line")
}
