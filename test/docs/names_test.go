package docs

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// What a backticked name of the docs must be, so that renaming a file, a
// folder, a Go identifier or an environment variable fails this test
// until the docs follow. Each code span outside fenced blocks is one
// token; a token with a space is prose or a command and is not checked.
//
//   - A repository path (its first element is a top-level entry of the
//     repository, or it starts with the module path, ./ or ../) must be a
//     tracked file or folder, or one .gitignore names (build output);
//     * and <name> elements match any one element. A path whose last
//     element is pkg.Ident (internal/todo/tableschema.Todo()) names a
//     package folder and an identifier declared in it.
//   - A bare file name with a source extension (app.go, cdk.json) must be
//     the name of a tracked file, or be spelled in one that is not
//     Markdown (config.json, which the code writes at deploy time).
//   - pkg.Ident, where pkg is the name of a package of this module, must
//     be declared at the top level of a package of that name; a further
//     .Member must be a field or method of that type (unless the type
//     embeds another, whose members cannot be listed here). A pkg that is
//     no package of this module (awscdk, a variable) is not checked; one
//     that is also the name of another module's package the code imports
//     (awssqs) passes with a word of that package.
//   - Type.Member, where Type is a type of this module (and nothing else
//     of it has that name), is checked the same way.
//   - A bare exported identifier (Name, or Name(...)) must be a name the
//     module's Go code knows: declared in it (test names included), used
//     from another package (CDK and SDK names), or spelled in a string
//     literal (metric names, CloudFormation properties, AWS actions); or a
//     word of a package of another module the code imports (an AWS API
//     name, or an error code, the SDK declares). The module's comments do
//     not count: a stale comment keeps no stale name alive.
//
// A page that says it is generated ("do not edit by hand") is left to its
// generator's tests: its names are measurements of other modules.
// CHANGELOG.md is not checked either: it names what was renamed.
//   - An environment variable (UPPER_CASE with an underscore, or
//     NAME=value) must appear in a tracked file that is not Markdown.

// docPages are the pages whose backticked names are checked.
var docPages = regexp.MustCompile(`^(README\.md|docs/.+\.md|constructs/[^/]+/README\.md|cmd/[^/]+/README\.md|examples/(.+/)?README\.md)$`)

// repo is what the docs may name: the tracked paths, the Go declarations
// and the words of the code.
type repo struct {
	paths   map[string]bool     // tracked files and their folders
	bases   map[string]bool     // base names of tracked files
	ignored func(string) bool   // a path .gitignore names
	pkgs    map[string]bool     // names of the module's packages
	decls   map[string]bool     // "pkg.Ident" of every top-level declaration
	dirDecl map[string]bool     // "dir.Ident" of every top-level declaration
	types   map[string]typeInfo // "pkg.Type" and "Type" of every type
	known   map[string]bool     // every name the Go code knows (see above)
	nonType map[string]bool     // names declared as something other than a type
	words   map[string]bool     // UPPER_CASE words of tracked files that are not Markdown
	texts   [][]byte            // tracked files that are not Markdown
	extPkgs map[string]bool     // names of the other modules' packages the code imports
	extWord map[string]bool     // the words of those packages' Go files
}

// typeInfo is what a type offers a .Member: its fields and methods, and
// whether it embeds a type (then its members are not all listed).
type typeInfo struct {
	members  map[string]bool
	embeds   bool
	declared int // how many types of this name (bare "Type" keys merge them)
}

const modulePrefix = module + "/"

var (
	spanRE     = regexp.MustCompile("``([^`\n]+?)``|`([^`\n]+)`")
	envRE      = regexp.MustCompile(`^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$`)
	exportedRE = regexp.MustCompile(`^([A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*)(\(.*\))?$`)
	selectorRE = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*)\.([A-Z][A-Za-z0-9_]*)(?:\.([A-Z][A-Za-z0-9]*))?(\(.*\))?$`)
	fileRE     = regexp.MustCompile(`^[A-Za-z0-9_.-]+\.(go|md|json|mod|sum|sh|ts|tsx|js|mjs|yml|yaml|html|css|txt)$`)
	upperWord  = regexp.MustCompile(`[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+`)
)

// check is what is wrong with one backticked token of page, or "".
func (r *repo) check(page, tok string) string {
	tok = strings.TrimSpace(tok)
	if tok == "" || strings.ContainsAny(tok, " \t") || strings.Contains(tok, "://") {
		return ""
	}
	if name, _, ok := strings.Cut(tok, "="); ok && envRE.MatchString(name) {
		tok = name
	}
	switch {
	case envRE.MatchString(tok):
		if !r.words[tok] {
			return "environment variable " + tok + " appears in no code, script or configuration file"
		}
		return ""
	case strings.Contains(tok, "/"):
		return r.checkPath(page, tok)
	case fileRE.MatchString(tok) && !selectorRE.MatchString(tok):
		if !r.bases[tok] && !r.ignored(tok) && !r.spelled(tok) {
			return "file " + tok + " is not the name of a tracked file, and no code spells it"
		}
		return ""
	}
	if m := selectorRE.FindStringSubmatch(tok); m != nil {
		return r.checkSelector(m[1], m[2], m[3])
	}
	if m := exportedRE.FindStringSubmatch(tok); m != nil && !r.known[m[1]] && !r.extWord[m[1]] {
		return "identifier " + m[1] + " is declared nowhere in the module, and its code never uses or spells it"
	}
	return ""
}

// checkSelector checks pkg.Ident(.Member) and Type.Member.
func (r *repo) checkSelector(x, ident, member string) string {
	if unicode.IsLower(rune(x[0])) {
		if !r.pkgs[x] {
			return "" // a variable, or a package of another module
		}
		if !r.decls[x+"."+ident] && !(r.extPkgs[x] && r.extWord[ident]) {
			return x + "." + ident + ": no package named " + x + " of the module declares " + ident
		}
		if ti, ok := r.types[x+"."+ident]; ok && member != "" && !ti.embeds && !ti.members[member] {
			return x + "." + ident + "." + member + ": " + ident + " has no field or method " + member
		}
		return ""
	}
	// Type.Member: only a type of this module with one declaration and no
	// embedded type has a member list to check against.
	if ti, ok := r.types[x]; ok && ti.declared == 1 && !ti.embeds && !r.nonType[x] && !ti.members[ident] {
		return x + "." + ident + ": type " + x + " has no field or method " + ident
	}
	return ""
}

// checkPath checks a token with a slash that names a repository path.
func (r *repo) checkPath(page, tok string) string {
	p := strings.TrimSuffix(tok, "/...")
	switch {
	case strings.HasPrefix(p, modulePrefix):
		p = strings.TrimPrefix(p, modulePrefix)
	case strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../"):
		p = path.Join(path.Dir(page), p)
	case strings.HasPrefix(p, "/"):
		return "" // a route or an absolute path, not the repository's
	default:
		first, _, _ := strings.Cut(p, "/")
		if !r.paths[first] && !r.ignored(first) {
			return "" // a path elsewhere (alias/aws/sns, text/event-stream, ...)
		}
	}
	p = strings.TrimSuffix(path.Clean(p), "/")
	if r.paths[p] || r.ignored(p) {
		return ""
	}
	if strings.ContainsAny(p, "*<") {
		re := "^"
		for i, el := range strings.Split(p, "/") {
			if i > 0 {
				re += "/"
			}
			if strings.HasPrefix(el, "<") && strings.HasSuffix(el, ">") {
				re += "[^/]+"
			} else {
				re += strings.ReplaceAll(regexp.QuoteMeta(el), `\*`, "[^/]*")
			}
		}
		g := regexp.MustCompile(re + "$")
		for q := range r.paths {
			if g.MatchString(q) {
				return ""
			}
		}
		return "path " + tok + " matches no file or folder of the repository"
	}
	// dir/pkg.Ident(...): a package folder and an identifier it declares.
	dir, last := path.Split(p)
	if name, rest, ok := strings.Cut(last, "."); ok {
		if m := selectorRE.FindStringSubmatch(name + "." + rest); m != nil && r.paths[dir+name] {
			if !r.dirDecl[dir+name+"."+m[2]] {
				return tok + ": package " + dir + name + " declares no " + m[2]
			}
			return ""
		}
	}
	return "path " + tok + " is not a file or folder of the repository"
}

// spelled reports whether a tracked file that is not Markdown contains s.
func (r *repo) spelled(s string) bool {
	for _, b := range r.texts {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// loadRepo reads the tracked files of root.
func loadRepo(t *testing.T, root string) *repo {
	out, err := exec.Command("git", "-C", root, "ls-files").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	r := &repo{paths: map[string]bool{}, bases: map[string]bool{}, pkgs: map[string]bool{}, decls: map[string]bool{},
		dirDecl: map[string]bool{}, types: map[string]typeInfo{}, known: map[string]bool{}, nonType: map[string]bool{},
		words: map[string]bool{}, extPkgs: map[string]bool{}, extWord: map[string]bool{}}
	ignored := map[string]bool{}
	r.ignored = func(p string) bool {
		if v, ok := ignored[p]; ok {
			return v
		}
		// Exit status 0: ignored; 1: not ignored. A folder pattern (web/dist/)
		// matches the path with a slash.
		ignored[p] = exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", p).Run() == nil ||
			exec.Command("git", "-C", root, "check-ignore", "-q", "--no-index", p+"/").Run() == nil
		return ignored[p]
	}
	r.loadImports(t, root)
	fset := token.NewFileSet()
	for _, f := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		r.bases[path.Base(f)] = true
		for d := f; d != "."; d = path.Dir(d) {
			r.paths[d] = true
		}
		if strings.HasSuffix(f, ".md") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil || len(b) > 4<<20 || bytes.IndexByte(b, 0) >= 0 {
			continue // a symlinked folder, a large or binary file
		}
		r.texts = append(r.texts, b)
		for _, w := range upperWord.FindAll(b, -1) {
			r.words[string(w)] = true
		}
		if !strings.HasSuffix(f, ".go") || strings.Contains(f, "testdata/") {
			continue
		}
		file, err := parser.ParseFile(fset, f, b, 0)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		r.addGo(path.Dir(f), file)
	}
	return r
}

// loadImports reads the packages of other modules that the module's code
// imports (go list): their names, and every word of their Go files.
func (r *repo) loadImports(t *testing.T, root string) {
	list := func(args ...string) []string {
		cmd := exec.Command("go", append([]string{"list"}, args...)...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	var ext []string
	seen := map[string]bool{}
	for _, p := range list("-f", `{{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "./...") {
		first, _, _ := strings.Cut(p, "/")
		if seen[p] || !strings.Contains(first, ".") || strings.HasPrefix(p, modulePrefix) {
			continue
		}
		seen[p] = true
		ext = append(ext, p)
		name := path.Base(p)
		if strings.HasPrefix(name, "v") && strings.Trim(name[1:], "0123456789") == "" {
			name = path.Base(path.Dir(p))
		}
		r.extPkgs[name] = true
	}
	word := regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	for _, dir := range list(append([]string{"-f", "{{.Dir}}"}, ext...)...) {
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range word.FindAll(b, -1) {
				r.extWord[string(w)] = true
			}
		}
	}
}

// addGo records what a Go file of dir declares, uses and spells.
func (r *repo) addGo(dir string, file *ast.File) {
	pkg := file.Name.Name
	r.pkgs[pkg] = true
	top := func(name string) {
		r.known[name] = true
		r.nonType[name] = true
		r.decls[pkg+"."+name] = true
		r.dirDecl[dir+"."+name] = true
	}
	typ := func(name string) typeInfo {
		ti, ok := r.types[pkg+"."+name]
		if !ok {
			ti = typeInfo{members: map[string]bool{}}
		}
		return ti
	}
	addMember := func(typeName, member string, embeds bool) {
		ti := typ(typeName)
		if member != "" {
			ti.members[member] = true
		}
		ti.embeds = ti.embeds || embeds
		r.types[pkg+"."+typeName] = ti
	}
	for _, d := range file.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			r.known[d.Name.Name] = true
			r.nonType[d.Name.Name] = true
			if d.Recv == nil {
				top(d.Name.Name)
				continue
			}
			recv := d.Recv.List[0].Type
			if s, ok := recv.(*ast.StarExpr); ok {
				recv = s.X
			}
			if ix, ok := recv.(*ast.IndexExpr); ok {
				recv = ix.X
			}
			if ix, ok := recv.(*ast.IndexListExpr); ok {
				recv = ix.X
			}
			if id, ok := recv.(*ast.Ident); ok {
				addMember(id.Name, d.Name.Name, false)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					for _, n := range s.Names {
						top(n.Name)
					}
				case *ast.TypeSpec:
					r.known[s.Name.Name] = true
					r.decls[pkg+"."+s.Name.Name] = true
					r.dirDecl[dir+"."+s.Name.Name] = true
					ti := typ(s.Name.Name)
					r.types[pkg+"."+s.Name.Name] = ti
					var fields []*ast.Field
					switch tt := s.Type.(type) {
					case *ast.StructType:
						fields = tt.Fields.List
					case *ast.InterfaceType:
						fields = tt.Methods.List
					default:
						if !s.Assign.IsValid() {
							addMember(s.Name.Name, "", true) // a defined type: its underlying type's methods are not listed
						}
					}
					for _, f := range fields {
						if len(f.Names) == 0 {
							addMember(s.Name.Name, "", true)
						}
						for _, n := range f.Names {
							r.known[n.Name] = true
							r.nonType[n.Name] = true
							addMember(s.Name.Name, n.Name, false)
						}
					}
				}
			}
		}
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			r.known[n.Sel.Name] = true
		case *ast.KeyValueExpr:
			if id, ok := n.Key.(*ast.Ident); ok {
				r.known[id.Name] = true // a field of another module's struct
			}
		case *ast.BasicLit:
			if n.Kind == token.STRING {
				if s, err := strconv.Unquote(n.Value); err == nil {
					for _, w := range strings.FieldsFunc(s, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) && c != '_' }) {
						r.known[w] = true
					}
				}
			}
		}
		return true
	})
}

// finish merges the types of every package under their bare names, for
// Type.Member.
func (r *repo) finish() {
	for k, ti := range r.types {
		_, name, _ := strings.Cut(k, ".")
		b, ok := r.types[name]
		if !ok {
			b = typeInfo{members: map[string]bool{}}
		}
		for m := range ti.members {
			b.members[m] = true
		}
		b.embeds = b.embeds || ti.embeds
		b.declared++
		r.types[name] = b
	}
}

// codeSpans are the code spans of md outside fenced blocks, with their
// line numbers.
func codeSpans(md string) []struct {
	line int
	text string
} {
	var out []struct {
		line int
		text string
	}
	for i, l := range outsideCode(md) {
		for _, m := range spanRE.FindAllStringSubmatch(l, -1) {
			out = append(out, struct {
				line int
				text string
			}{i + 1, m[1] + m[2]})
		}
	}
	return out
}

// TestDocsNameWhatExists: every backticked path, Go identifier and
// environment variable of the docs exists (the rules above).
func TestDocsNameWhatExists(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	r := loadRepo(t, root)
	r.finish()
	pages, checked := 0, 0
	for p := range r.paths {
		if !docPages.MatchString(p) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("do not edit by hand")) {
			continue
		}
		pages++
		for _, s := range codeSpans(string(b)) {
			checked++
			if problem := r.check(p, s.text); problem != "" {
				t.Errorf("%s:%d: `%s`: %s", p, s.line, s.text, problem)
			}
		}
	}
	if pages < 20 || checked < 1000 {
		t.Fatalf("checked %d spans in %d pages; did the docs or the span syntax change?", checked, pages)
	}
	t.Logf("checked %d code spans in %d pages", checked, pages)
}

// TestCheckName: the rules on a small repository: what exists passes, a
// made-up or renamed path, identifier or variable fails.
func TestCheckName(t *testing.T) {
	r := &repo{
		paths: map[string]bool{"docs": true, "docs/timers.md": true, "test": true, "test/timer_test.go": true,
			"contract": true, "contract/schema.go": true, "internal": true, "internal/todo": true, "internal/todo/tableschema": true,
			"lambdas": true, "lambdas/fire": true, "lambdas/fire/main.go": true},
		bases:   map[string]bool{"timer_test.go": true, "schema.go": true, "main.go": true, "timers.md": true},
		ignored: func(p string) bool { return p == "cdk.out" || p == "web/dist" || p == "web" },
		pkgs:    map[string]bool{"contract": true, "scheduleonwrite": true, "tableschema": true, "awssqs": true},
		decls:   map[string]bool{"contract.Schema": true, "scheduleonwrite.NewSchedulerTimer": true, "tableschema.Todo": true},
		dirDecl: map[string]bool{"internal/todo/tableschema.Todo": true},
		types: map[string]typeInfo{
			"contract.Schema": {members: map[string]bool{"DueAttr": true, "Validate": true}},
			"Schema":          {members: map[string]bool{"DueAttr": true, "Validate": true}, declared: 1},
			"Core":            {members: map[string]bool{"Table": true}, declared: 1},
		},
		known:   map[string]bool{"Schema": true, "NewSchedulerTimer": true, "PutItem": true, "TestTTL": true},
		nonType: map[string]bool{"Core": true}, // a field named Core too
		words:   map[string]bool{"UNSCHEDULE_TIMER": true},
		texts:   [][]byte{[]byte(`put("config.json")`)},
		extPkgs: map[string]bool{"awssqs": true},
		extWord: map[string]bool{"IQueue": true, "TagQueue": true},
	}
	tests := []struct {
		tok, want string // want: part of the problem, "" for none
	}{
		{"test/timer_test.go", ""},
		{"test/layers_test.go", "not a file or folder"},
		{"lambdas/*", ""},
		{"lambdas/<name>/main.go", ""},
		{"lambdas/<name>/handler.go", "matches no file"},
		{"./timers.md", ""},
		{"../test/timer_test.go", ""},
		{"github.com/unschedule/unschedule/contract", ""},
		{"github.com/unschedule/unschedule/futureevents", "not a file or folder"},
		{"github.com/aws/aws-cdk-go/awscdk/v2", ""},
		{"alias/aws/sns", ""},
		{"/me/notifications", ""},
		{"web/dist", ""},
		{"internal/todo/tableschema.Todo()", ""},
		{"internal/todo/tableschema.Tasks()", "declares no Tasks"},
		{"schema.go", ""},
		{"layers.go", "not the name of a tracked file"},
		{"config.json", ""},
		{"awssqs.IQueue", ""},
		{"awssqs.IQueues", "declares IQueues"},
		{"TagQueue", ""},
		{"Core.MetricLagSeconds", ""},
		{"contract.Schema", ""},
		{"contract.Schema.DueAttr", ""},
		{"contract.Schema.DueAt", "has no field or method DueAt"},
		{"contract.Scheme", "declares Scheme"},
		{"scheduleonwrite.ExecutionLayer", "declares ExecutionLayer"},
		{"awscdk.Duration", ""},
		{"jobs.Timer", ""},
		{"Schema.Validate()", ""},
		{"Schema.Check()", "has no field or method Check"},
		{"Schema", ""},
		{"NewSchedulerTimer(props)", ""},
		{"ExecutionLayer", "declared nowhere"},
		{"PutItem", ""},
		{"TestTTL", ""},
		{"TestLayers", "declared nowhere"},
		{"UNSCHEDULE_TIMER", ""},
		{"UNSCHEDULE_TIMER=TTL", ""},
		{"UNSCHEDULE_EXECUTION_LAYER", "appears in no code"},
		{"TTL", ""},
		{"go test ./test/docs/...", ""},
		{"https://example.com/a/b", ""},
	}
	for _, tc := range tests {
		t.Run(tc.tok, func(t *testing.T) {
			got := r.check("docs/timers.md", tc.tok)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("check(%q) = %q, want a problem containing %q", tc.tok, got, tc.want)
			}
		})
	}
}
