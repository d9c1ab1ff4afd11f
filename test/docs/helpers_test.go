package docs

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReadSnippets: only blocks fenced exactly ```go are snippets, and
// each knows the line of its first line of code.
func TestReadSnippets(t *testing.T) {
	tests := []struct {
		name, md string
		want     []string // file:line code
	}{
		{"go block", "x\n```go\na := 1\n```\n", []string{"3: a := 1\n"}},
		{"other info strings are not compiled", "```text\nno\n```\n```go-sketch\nno\n```\n```\nno\n```\n", nil},
		{"a go fence inside another block is text", "````md\n```go\nno\n```\n````\n", nil},
		{"indented fence in a list", "- item\n\n  ```go\n  b := 2\n  ```\n", []string{"4: b := 2\n"}},
		{"two blocks", "```go\na\n```\n\n```go\nb\nc\n```\n", []string{"2: a\n", "6: b\nc\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(tc.md), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := readSnippets(dir, "README.md")
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, s := range got {
				lines = append(lines, strings.Join([]string{strconv.Itoa(s.line) + ":", s.code}, " "))
			}
			if strings.Join(lines, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", lines, tc.want)
			}
		})
	}
}

// TestSplitImports: a fragment's leading import lines are its imports;
// the body starts on the first other line.
func TestSplitImports(t *testing.T) {
	tests := []struct {
		name, code, head string
		bodyLine         int
	}{
		{"no imports", "a := 1\n", "", 0},
		{"a comment first is body", "// x\na := 1\n", "", 0},
		{"one import", "import \"fmt\"\n\nfmt.Println()\n", "import \"fmt\"\n", 1},
		{"an import block", "import (\n\t\"fmt\"\n\tx \"time\"\n)\nfmt.Println(x.Now())\n", "import (\n\t\"fmt\"\n\tx \"time\"\n)\n", 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			head, body, line := splitImports(tc.code)
			if head != tc.head || line != tc.bodyLine || head+body != tc.code {
				t.Errorf("splitImports = %q, %q, %d; want head %q, body from line %d", head, body, line, tc.head, tc.bodyLine)
			}
		})
	}
}

// TestResolve: a package name resolves to the README's own package, then
// the one public package of the name, then the CDK and the table.
func TestResolve(t *testing.T) {
	pkgs := map[string][]string{
		"futureevents": {module + "/constructs/futureevents", module + "/futureevents", module + "/test/eventservices"},
		"campaigns":    {module + "/constructs/campaigns", module + "/test/campaignstest"},
		"timers":       {module + "/internal/core/timerspec"},
	}
	tests := []struct {
		name, pkg, dir, want, wantErr string
	}{
		{"own folder first", "futureevents", "constructs/futureevents", module + "/constructs/futureevents", ""},
		{"two public packages need an import", "futureevents", ".", "", "two packages are named futureevents"},
		{"test packages do not count", "campaigns", "docs", module + "/constructs/campaigns", ""},
		{"internal packages are not for docs", "timers", ".", "", "no package named timers"},
		{"a CDK module", "awssqs", ".", "github.com/aws/aws-cdk-go/awscdk/v2/awssqs", ""},
		{"the table", "jsii", ".", "github.com/aws/jsii-runtime-go", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolve(tc.pkg, tc.dir, pkgs)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("resolve(%s) = %q, %v; want an error containing %q", tc.pkg, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("resolve(%s) = %q, %v; want %q", tc.pkg, got, err, tc.want)
			}
		})
	}
}
