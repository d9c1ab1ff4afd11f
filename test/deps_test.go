package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCDKAppImportsNoAWSSDK: the CDK app (the module root's package main,
// and every construct through it) builds infrastructure only. An AWS SDK
// service client or the Lambda runtime in its import graph means a
// construct reached into a function's adapter, and the app compiles and
// ships code it never runs.
func TestCDKAppImportsNoAWSSDK(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "..").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	var bad []string
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/aws/aws-sdk-go-v2") || strings.HasPrefix(pkg, "github.com/aws/aws-lambda-go") ||
			(strings.HasPrefix(pkg, "github.com/unschedule/unschedule/internal/") && strings.Contains(pkg, "/adapters/")) {
			bad = append(bad, pkg)
		}
	}
	if len(bad) > 0 {
		t.Fatalf("the CDK app imports %d runtime packages, e.g. %v: move the constant it needs into a package without SDK imports (internal/todo/tableschema, internal/core/metrics)", len(bad), bad[:min(len(bad), 5)])
	}
}

// TestCodeMapNamesEveryPackage: the README's code map (the first code
// block under "## Code layout") names every Go package of the module,
// exactly or through a "dir/*" or "dir/<name>" line, so a newcomer finds
// each one and a new package cannot be left out.
func TestCodeMapNamesEveryPackage(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Code layout\n\n```\n")
	block, _, ok2 := strings.Cut(after, "```")
	if !ok || !ok2 {
		t.Fatal("README.md has no code block under \"## Code layout\"")
	}
	exact, prefixes := map[string]bool{}, []string{}
	for _, line := range strings.Split(block, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		head, _, _ := strings.Cut(line, "  ")
		for _, tok := range strings.Split(head, ", ") {
			tok = strings.TrimSuffix(strings.TrimSpace(tok), "/")
			if p, ok := strings.CutSuffix(tok, "/*"); ok {
				prefixes = append(prefixes, p+"/")
			} else if p, ok := strings.CutSuffix(tok, "/<name>"); ok {
				prefixes = append(prefixes, p+"/")
			} else {
				exact[tok] = true
			}
		}
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, _ := filepath.Abs("..")
	var missing []string
	for _, dir := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		if rel == "." || exact[rel] || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(rel, p) }) {
			continue
		}
		missing = append(missing, rel)
	}
	if len(missing) > 0 {
		t.Errorf("README.md's code map does not name %d packages: %v; add a line for each (or a dir/* line)", len(missing), missing)
	}
}
