// Package docs checks that the docs tell the truth: every Go snippet of
// the docs compiles against this module (TestEverySnippetCompiles), and
// every constant documented as a prop's default names a prop
// (TestPropDefaultsNameProps), so a README cannot drift from the API.
//
// Which snippets are compiled: every fenced block whose info string is exactly "go"
// in a tracked README.md or docs/*.md (git ls-files). A block meant as an
// illustration only is fenced with another info string ("text", or none).
//
// How a snippet is compiled:
//   - A block with a package clause is a whole file, built as it is, in a
//     package of its own.
//   - Any other block is a function body. It may open with import lines;
//     every other package it names (pkg.Name) is imported by its name: the
//     package of the README's own folder first, then the one public
//     package of the module with that name (not under internal/ or test/),
//     then the CDK, jsii, the AWS SDK and the standard library (imports
//     below). A name two public packages share needs an import line.
//   - The names in givens (stack, alarmTopic, runJob, ...) are what the
//     reader already has; a block uses them without declaring them.
//   - What a block declares at its top level counts as used: a fragment
//     shows a value that the reader's code goes on to use.
//
// All blocks compile in one `go build` of generated packages that exist
// only in an overlay (nothing is written into the repository), and a
// //line directive makes every compiler message point at the Markdown
// file and line.
package docs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/unschedule/unschedule"

// givens are the variables a fragment may use without declaring them,
// with the types the docs assume.
const givens = `package gen

import (
	"context"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/unschedule/unschedule/constructs/notifications"
	"github.com/unschedule/unschedule/constructs/scheduleonwrite"
	"github.com/unschedule/unschedule/constructs/userauth"
)

var (
	stack                         awscdk.Stack
	alarmTopic, topic             awssns.ITopic
	table                         awsdynamodb.ITable
	runJob, worker, remind        awslambda.IFunction // a function of the reader's
	book, subscribe               awslambda.Function  // a function of this app (it gets env)
	writerRole, writer, publisher awsiam.IGrantable
	jobs, tasks                   *scheduleonwrite.ScheduleOnWrite
	timer                         *scheduleonwrite.SchedulerTimer // tasks' timer
	users                         *userauth.UserAuth
	notify                        *notifications.UserNotifications

	// In a Lambda function.
	ctx       context.Context
	cfg       aws.Config
	email     string
	remindArn string
	chargeAt  time.Time
	payload   []byte
)
`

// imports are the packages outside this module a fragment may name.
var imports = map[string]string{
	"awscdk":     "github.com/aws/aws-cdk-go/awscdk/v2",
	"constructs": "github.com/aws/constructs-go/constructs/v10",
	"jsii":       "github.com/aws/jsii-runtime-go",
	"aws":        "github.com/aws/aws-sdk-go-v2/aws",
	"config":     "github.com/aws/aws-sdk-go-v2/config",
	"dynamodb":   "github.com/aws/aws-sdk-go-v2/service/dynamodb",
	"sfn":        "github.com/aws/aws-sdk-go-v2/service/sfn",
	"context":    "context",
	"errors":     "errors",
	"fmt":        "fmt",
	"time":       "time",
}

// cdkPackage is a CDK module's package name (awsdynamodb, awslambda, ...).
var cdkPackage = regexp.MustCompile(`^aws[a-z0-9]+$`)

// snippet is one ```go block.
type snippet struct {
	file  string // slash path from the repository root
	line  int    // line of the block's first line of code
	lines int    // number of lines of code
	code  string
}

func TestEverySnippetCompiles(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	tracked := strings.Fields(string(out))
	var snippets []*snippet
	for _, f := range tracked {
		if path.Base(f) != "README.md" && !(strings.HasPrefix(f, "docs/") && strings.HasSuffix(f, ".md")) {
			continue
		}
		found, err := readSnippets(root, f)
		if err != nil {
			t.Fatal(err)
		}
		snippets = append(snippets, found...)
	}
	if len(snippets) == 0 {
		t.Fatal("found no ```go block in the docs; did the fence convention change?")
	}
	pkgs := modulePackages(t, root, tracked)

	gen := filepath.Join(root, "test", "docs", "gen")
	tmp := t.TempDir()
	overlay := map[string]string{}
	add := func(dir, name, src string) {
		onDisk := filepath.Join(tmp, fmt.Sprintf("%d.go", len(overlay)))
		if err := os.WriteFile(onDisk, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay[filepath.Join(dir, name)] = onDisk
	}
	add(gen, "givens.go", givens)
	var build []string
	compiled := 0
	for i, s := range snippets {
		src, dir, err := s.source(root, i, pkgs)
		if err != nil {
			t.Errorf("%s:%d: %v", s.file, s.line, strings.ReplaceAll(err.Error(), root+"/", ""))
			continue
		}
		if dir == "" {
			add(gen, fmt.Sprintf("snippet%d.go", i), src)
		} else {
			add(filepath.Join(gen, dir), "main.go", src)
			build = append(build, "./test/docs/gen/"+dir)
		}
		compiled++
	}
	build = append(build, "./test/docs/gen")

	ov, err := json.Marshal(map[string]any{"Replace": overlay})
	if err != nil {
		t.Fatal(err)
	}
	ovFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovFile, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	// -e: every error of a package, not the first ten.
	cmd := exec.Command("go", append([]string{"build", "-overlay", ovFile, "-gcflags=-e"}, build...)...)
	cmd.Dir = root
	msg, err := cmd.CombinedOutput()
	t.Logf("compiled %d of %d snippets of %d files", compiled, len(snippets), countFiles(snippets))
	if err == nil {
		return
	}
	// Group the compiler's messages by snippet: file.md:line:col: message.
	bySnippet := map[*snippet][]string{}
	var other []string
	at := regexp.MustCompile(`^(?:\./)?(\S+\.md):(\d+)(?::\d+)?: `)
	sc := bufio.NewScanner(bytes.NewReader(msg))
	for sc.Scan() {
		line := sc.Text()
		m := at.FindStringSubmatch(line)
		var owner *snippet
		if m != nil {
			n, _ := strconv.Atoi(m[2]) // \d+
			for _, s := range snippets {
				if s.file == m[1] && n >= s.line && n < s.line+s.lines {
					owner = s
				}
			}
		}
		if owner == nil {
			if !strings.HasPrefix(line, "# ") {
				other = append(other, line)
			}
			continue
		}
		bySnippet[owner] = append(bySnippet[owner], strings.TrimPrefix(line, "./"))
	}
	for _, s := range snippets {
		if m := bySnippet[s]; len(m) > 0 {
			t.Errorf("the ```go block at %s:%d does not compile (fix it, or fence it as ```text if it is an illustration only):\n\t%s",
				s.file, s.line, strings.Join(m, "\n\t"))
		}
	}
	if len(other) > 0 || len(bySnippet) == 0 {
		t.Errorf("go build of the snippets: %v\n%s", err, strings.Join(other, "\n"))
	}
}

var fence = regexp.MustCompile("^( *)(```+|~~~+)\\s*([^\\s`]*)")

// readSnippets returns the ```go blocks of a Markdown file.
func readSnippets(root, file string) ([]*snippet, error) {
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	var out []*snippet
	var cur *snippet
	var indent, marker string
	for i, line := range strings.Split(string(b), "\n") {
		m := fence.FindStringSubmatch(line)
		switch {
		case cur == nil && marker == "" && m != nil:
			indent, marker = m[1], m[2]
			if m[3] == "go" {
				cur = &snippet{file: file, line: i + 2}
			}
		case marker != "" && m != nil && m[1] == indent && strings.HasPrefix(m[2], marker) && m[3] == "":
			if cur != nil {
				out = append(out, cur)
			}
			cur, marker = nil, ""
		case cur != nil:
			cur.code += strings.TrimPrefix(line, indent) + "\n"
			cur.lines++
		}
	}
	if marker != "" {
		return nil, fmt.Errorf("%s: a code block is not closed", file)
	}
	return out, nil
}

// source is the Go file that compiles the snippet. dir is "" for a
// fragment (compiled in the shared package) and a package folder of its
// own for a whole file.
func (s *snippet) source(root string, i int, pkgs map[string][]string) (src, dir string, err error) {
	abs := filepath.Join(root, s.file)
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "", s.code, parser.PackageClauseOnly); err == nil {
		// A whole file; a //line directive applies to the line after it.
		return fmt.Sprintf("//line %s:%d:1\n%s", abs, s.line, s.code), fmt.Sprintf("file%d", i), nil
	}

	head, body, bodyLine := splitImports(s.code)
	wrapped := "package gen\n\n" + head + "\nfunc snippet() {\n" + fmt.Sprintf("//line %s:%d:1\n", abs, s.line+bodyLine) + body + "}\n"
	f, err := parser.ParseFile(fset, "snippet.go", wrapped, parser.ParseComments)
	if err != nil {
		return "", "", fmt.Errorf("does not parse as a function body: %w", err)
	}
	have := map[string]bool{}
	for _, im := range f.Imports {
		p := strings.Trim(im.Path.Value, `"`)
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		have[name] = true
	}
	// The names the block uses as pkg.X and does not declare itself.
	unresolved := map[*ast.Ident]bool{}
	for _, id := range f.Unresolved {
		unresolved[id] = true
	}
	var need []string
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && unresolved[id] && !have[id.Name] && !givenNames[id.Name] {
				have[id.Name] = true
				need = append(need, id.Name)
			}
		}
		return true
	})
	var added []string
	for _, name := range need {
		p, err := resolve(name, path.Dir(s.file), pkgs)
		if err != nil {
			return "", "", err
		}
		added = append(added, fmt.Sprintf("import %s %q\n", name, p))
	}
	// Count the block's top-level declarations as used.
	var used []string
	fn := f.Decls[len(f.Decls)-1].(*ast.FuncDecl)
	for _, st := range fn.Body.List {
		switch st := st.(type) {
		case *ast.AssignStmt:
			if st.Tok == token.DEFINE {
				for _, e := range st.Lhs {
					if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
						used = append(used, "_ = "+id.Name+"\n")
					}
				}
			}
		case *ast.DeclStmt:
			if g, ok := st.Decl.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, sp := range g.Specs {
					for _, id := range sp.(*ast.ValueSpec).Names {
						if id.Name != "_" {
							used = append(used, "_ = "+id.Name+"\n")
						}
					}
				}
			}
		}
	}
	slices.Sort(used)
	used = slices.Compact(used)
	src = "package gen\n\n" + strings.Join(added, "") + head +
		fmt.Sprintf("\nfunc snippet%d() {\n", i) + fmt.Sprintf("//line %s:%d:1\n", abs, s.line+bodyLine) + body +
		"//line snippet_glue.go:1\n" + strings.Join(used, "") + "}\n"
	return src, "", nil
}

// splitImports splits a fragment's leading import declarations from its
// body; bodyLine is the body's first line, counted from 0.
func splitImports(code string) (head, body string, bodyLine int) {
	lines := strings.SplitAfter(code, "\n")
	n, inBlock := 0, false
	for ; n < len(lines); n++ {
		t := strings.TrimSpace(lines[n])
		switch {
		case inBlock:
			inBlock = t != ")"
		case strings.HasPrefix(t, "import ("):
			inBlock = true
		case !strings.HasPrefix(t, "import "):
			return strings.Join(lines[:n], ""), strings.Join(lines[n:], ""), n
		}
	}
	return code, "", n
}

// givenNames are the variables declared in givens.
var givenNames = func() map[string]bool {
	f, err := parser.ParseFile(token.NewFileSet(), "givens.go", givens, 0)
	if err != nil {
		panic(err)
	}
	names := map[string]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, sp := range g.Specs {
				for _, id := range sp.(*ast.ValueSpec).Names {
					names[id.Name] = true
				}
			}
		}
	}
	return names
}()

// resolve finds the import path of a package a fragment of the Markdown
// file in folder dir names.
func resolve(name, dir string, pkgs map[string][]string) (string, error) {
	cands := pkgs[name]
	if own := path.Join(module, dir); slices.Contains(cands, own) {
		return own, nil
	}
	var public []string
	for _, p := range cands {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		if !slices.Contains(strings.Split(rel, "/"), "internal") && rel != "test" && !strings.HasPrefix(rel, "test/") {
			public = append(public, p)
		}
	}
	switch {
	case len(public) == 1:
		return public[0], nil
	case len(public) > 1:
		return "", fmt.Errorf("two packages are named %s (%s): open the block with an import line", name, strings.Join(public, ", "))
	case imports[name] != "":
		return imports[name], nil
	case cdkPackage.MatchString(name):
		return "github.com/aws/aws-cdk-go/awscdk/v2/" + name, nil
	}
	return "", fmt.Errorf("no package named %s: open the block with an import line, or add it to imports in test/docs", name)
}

// modulePackages maps a package name to the import paths of the module's
// importable packages of that name (package main is not importable).
func modulePackages(t *testing.T, root string, tracked []string) map[string][]string {
	t.Helper()
	seen := map[string]bool{}
	out := map[string][]string{}
	for _, f := range tracked {
		dir := path.Dir(f)
		if !strings.HasSuffix(f, ".go") || strings.HasSuffix(f, "_test.go") || seen[dir] ||
			strings.HasPrefix(f, "node_modules/") || slices.ContainsFunc(strings.Split(dir, "/"), func(e string) bool { return e == "testdata" }) {
			continue
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, f), nil, parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		seen[dir] = true
		if name := parsed.Name.Name; name != "main" {
			out[name] = append(out[name], path.Join(module, dir))
		}
	}
	for _, ps := range out {
		sort.Strings(ps)
	}
	return out
}

func countFiles(s []*snippet) int {
	files := map[string]bool{}
	for _, x := range s {
		files[x.file] = true
	}
	return len(files)
}
