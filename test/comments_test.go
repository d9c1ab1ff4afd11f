package test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// goFile is one non-test .go file of the module, parsed with its comments.
type goFile struct {
	rel  string // slash path from the module root
	fset *token.FileSet
	file *ast.File
}

// moduleGoFiles parses every non-test .go file of the module under the
// given roots (slash paths from the module root), skipping what is not
// the module's Go: node_modules, the web frontend, testdata, cdk.out and
// hidden directories.
func moduleGoFiles(t *testing.T, roots ...string) []goFile {
	t.Helper()
	var files []goFile
	for _, root := range roots {
		top := filepath.Join("..", filepath.FromSlash(root))
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != top {
				switch n := d.Name(); {
				case n == "node_modules", n == "web", n == "testdata", n == "cdk.out", len(n) > 1 && strings.HasPrefix(n, "."):
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel("..", p)
			if err != nil {
				return err
			}
			files = append(files, goFile{rel: filepath.ToSlash(rel), fset: fset, file: f})
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", root, err)
		}
	}
	if len(files) == 0 {
		t.Fatalf("no Go files found under %v", roots)
	}
	return files
}

// commandNames are the mains whose command is not named by their
// directory: the module root is the CDK app (cdk.json runs "go run .").
var commandNames = map[string]string{".": "app"}

// packageCommentProblem says what is wrong with a file's package comment,
// or "" when it names its own package: "Package <name> ..." for a library,
// "Command <directory> ..." for a main (Go's convention for both).
func packageCommentProblem(rel, pkg, doc string) string {
	words := strings.Fields(doc)
	if len(words) < 2 {
		return "the package comment is too short to name its package"
	}
	want := "Package " + pkg
	if pkg == "main" {
		dir := filepath.ToSlash(filepath.Dir(rel))
		name, ok := commandNames[dir]
		if !ok {
			name = filepath.Base(dir)
		}
		want = "Command " + name
	}
	if got := words[0] + " " + strings.TrimRight(words[1], ":,.;"); got != want {
		return "the package comment starts " + got + ", want " + want
	}
	return ""
}

// TestPackageCommentsNameTheirPackage: a package comment names its own
// package, so godoc and a reader of the file agree on what it is; and a
// package has at most one package comment, or two that say the same
// (godoc would join them).
func TestPackageCommentsNameTheirPackage(t *testing.T) {
	type pkgKey struct{ dir, name string }
	docs := map[pkgKey]string{}
	docFile := map[pkgKey]string{}
	for _, f := range moduleGoFiles(t, ".") {
		if f.file.Doc == nil {
			continue
		}
		pkg, doc := f.file.Name.Name, f.file.Doc.Text()
		if problem := packageCommentProblem(f.rel, pkg, doc); problem != "" {
			t.Errorf("%s: %s (package %s)", f.rel, problem, pkg)
		}
		k := pkgKey{filepath.Dir(f.rel), pkg}
		if prev, ok := docs[k]; ok && prev != doc {
			t.Errorf("%s and %s: package %s has two differing package comments; keep one (a doc.go for a long one)", docFile[k], f.rel, pkg)
			continue
		}
		docs[k], docFile[k] = doc, f.rel
	}
}

func TestPackageCommentProblem(t *testing.T) {
	for _, tc := range []struct {
		rel, pkg, doc string
		ok            bool
	}{
		{"internal/core/timerspec/timerspec.go", "timerspec", "Package timerspec names the timers.", true},
		{"internal/core/timerspec/timerspec.go", "timerspec", "Package timers names the timers.", false},
		{"internal/core/timerspec/timerspec.go", "timerspec", "Package timerspec: the timers.", true},
		{"internal/core/timerspec/timerspec.go", "timerspec", "Timerspec names the timers.", false},
		{"lambdas/fire/main.go", "main", "Command fire is what every schedule invokes.", true},
		{"lambdas/fire/main.go", "main", "Command expiry is what every schedule invokes.", false},
		{"lambdas/fire/main.go", "main", "Package main is the firing function.", false},
		{"app.go", "main", "Command app is the CDK app.", true},
		{"app.go", "main", "Package", false},
	} {
		if got := packageCommentProblem(tc.rel, tc.pkg, tc.doc) == ""; got != tc.ok {
			t.Errorf("packageCommentProblem(%q, %q, %q) ok = %v, want %v", tc.rel, tc.pkg, tc.doc, got, tc.ok)
		}
	}
}

// maxCommentLines is the longest comment block the library's Go may
// carry: what a piece of code does and why, in a few lines. A longer
// reason is written once in docs/ (design rationale in docs/decisions/)
// and linked from the code. A package's doc.go is exempt: it is the
// package's documentation page.
const maxCommentLines = 20

// libraryRoots are the directories whose comments the guard reads.
var libraryRoots = []string{"internal/core", "contract", "firefn", "constructs", "lambdas"}

// longCommentExceptions are the comment blocks allowed to be longer,
// keyed "<file>: <first line of the block's text>", each with its reason.
// None today: every long block was moved to docs/ or shortened.
var longCommentExceptions = map[string]string{}

// TestCommentBlocksAreShort: no comment block in the library's non-test
// Go is longer than maxCommentLines (doc.go and longCommentExceptions
// aside).
func TestCommentBlocksAreShort(t *testing.T) {
	for _, f := range moduleGoFiles(t, libraryRoots...) {
		if filepath.Base(f.rel) == "doc.go" {
			continue
		}
		for _, g := range f.file.Comments {
			start, end := f.fset.Position(g.Pos()).Line, f.fset.Position(g.End()).Line
			if n := end - start + 1; n > maxCommentLines {
				first, _, _ := strings.Cut(g.Text(), "\n")
				if _, ok := longCommentExceptions[f.rel+": "+first]; ok {
					continue
				}
				t.Errorf("%s:%d: a comment block of %d lines (at most %d): keep what and why in a few lines, "+
					"move the rest to docs/ (docs/decisions/ for a rationale) and link it, or move a package comment to doc.go",
					f.rel, start, n, maxCommentLines)
			}
		}
	}
}
