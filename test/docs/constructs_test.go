package docs

import (
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

// sectionOrder is the Solutions Constructs order of a construct README's
// first sections: a short example, the props, what the construct exposes,
// the defaults it applies, and its diagram. A heading matches when it
// starts with the word ("Props (`XProps`)"); other sections come after.
var sectionOrder = []string{"Usage", "Props", "Properties", "Defaults", "Diagram"}

// api is what a construct package exports that its README must document.
type api struct {
	props   map[string]bool // exported fields of its *Props structs
	exposed map[string]bool // exported fields and methods of each type T built by New<T>
	known   map[string]bool // every exported field and method of its structs, for Type.Name cells
	funcs   map[string]bool // every exported method and function, for `Name(...)` in Properties
}

// TestConstructReadmes: every constructs/<name>/README.md opens with the
// sections of sectionOrder, in that order; its Props tables name every
// exported prop field and nothing else; its Properties section names every
// exported field and method of the construct, and its tables nothing that
// does not exist.
func TestConstructReadmes(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "constructs").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	byPkg := map[string][]string{}
	for _, f := range strings.Fields(string(out)) {
		dir := path.Dir(f)
		if strings.Count(f, "/") == 2 && strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") && path.Base(dir) != "internal" {
			byPkg[dir] = append(byPkg[dir], filepath.Join(root, f))
		}
	}
	if len(byPkg) < 10 {
		t.Fatalf("found %d construct packages (%v); did the layout change?", len(byPkg), byPkg)
	}
	for dir, files := range byPkg {
		t.Run(path.Base(dir), func(t *testing.T) {
			a, err := readAPI(files)
			if err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(filepath.Join(root, dir, "README.md"))
			if err != nil {
				t.Fatalf("a construct has a README: %v", err)
			}
			for _, p := range checkReadme(string(md), a) {
				t.Errorf("%s/README.md: %s", dir, p)
			}
		})
	}
}

// readAPI parses a package's files for its props, its constructs' fields
// and methods, and every exported field and method of its structs.
func readAPI(files []string) (api, error) {
	a := api{props: map[string]bool{}, exposed: map[string]bool{}, known: map[string]bool{}, funcs: map[string]bool{}}
	fset := token.NewFileSet()
	fields := map[string][]string{}  // struct type -> exported fields
	methods := map[string][]string{} // type -> exported methods
	built := map[string]bool{}       // T of a New<T> that returns *T
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			return a, err
		}
		for _, d := range file.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					ts, ok := sp.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() {
						continue
					}
					if st, ok := ts.Type.(*ast.StructType); ok {
						fields[ts.Name.Name] = []string{}
						for _, field := range st.Fields.List {
							for _, n := range field.Names {
								if n.IsExported() {
									fields[ts.Name.Name] = append(fields[ts.Name.Name], n.Name)
								}
							}
						}
					}
				}
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				a.funcs[d.Name.Name] = true
				if d.Recv != nil {
					recv := d.Recv.List[0].Type
					if star, ok := recv.(*ast.StarExpr); ok {
						recv = star.X
					}
					if id, ok := recv.(*ast.Ident); ok {
						methods[id.Name] = append(methods[id.Name], d.Name.Name)
					}
					continue
				}
				if name, ok := strings.CutPrefix(d.Name.Name, "New"); ok && d.Type.Results != nil && len(d.Type.Results.List) == 1 {
					if star, ok := d.Type.Results.List[0].Type.(*ast.StarExpr); ok {
						if id, ok := star.X.(*ast.Ident); ok && id.Name == name {
							built[name] = true
						}
					}
				}
			}
		}
	}
	for typ, fs := range fields {
		for _, n := range append(slices.Clone(fs), methods[typ]...) {
			a.known[n] = true
			if built[typ] {
				a.exposed[n] = true
			}
		}
		if strings.HasSuffix(typ, "Props") {
			for _, n := range fs {
				a.props[n] = true
			}
		}
	}
	return a, nil
}

// firstCellNames are the identifiers in backticks in a table row's first
// cell: `Name`, `Name(grantee)`, `Type.Name`; each as its last element.
var firstCellNames = regexp.MustCompile("`(?:[A-Za-z_][A-Za-z0-9_]*\\.)*([A-Za-z_][A-Za-z0-9_]*)(?:\\([^`]*\\))?`")

// calledNames are the methods and functions a section names as calls of
// its own package: `Name(`. A qualified `x.Name(` may be another type's
// (a CDK method), and is not checked.
var calledNames = regexp.MustCompile("`([A-Z][A-Za-z0-9_]*)\\(")

// checkReadme returns what is wrong with a construct README given the
// package's API.
func checkReadme(md string, a api) []string {
	var problems []string
	sections := map[string]string{} // sectionOrder word -> its text
	var order []string
	cur := ""
	for _, l := range outsideCode(md) { // an example's "## " comment is no heading
		if h, ok := strings.CutPrefix(l, "## "); ok {
			order = append(order, h)
			cur = ""
			for _, w := range sectionOrder {
				if h == w || strings.HasPrefix(h, w+" ") {
					cur = w
				}
			}
			continue
		}
		if cur != "" {
			sections[cur] += l + "\n"
		}
	}
	if len(order) < len(sectionOrder) {
		return append(problems, "the first sections are "+strings.Join(order, ", ")+"; want "+strings.Join(sectionOrder, ", "))
	}
	for i, w := range sectionOrder {
		if h := order[i]; h != w && !strings.HasPrefix(h, w+" ") {
			return append(problems, "section "+strconv.Itoa(i+1)+" is \""+h+"\"; want the first sections in the order "+strings.Join(sectionOrder, ", "))
		}
	}

	inProps := map[string]bool{}
	for _, n := range tableFirstCells(sections["Props"]) {
		inProps[n] = true
		if !a.props[n] && !a.known[n] {
			problems = append(problems, "Props names `"+n+"`, which is no prop field")
		}
	}
	for _, n := range sortedKeys(a.props) {
		if !inProps[n] {
			problems = append(problems, "the Props table has no row for the prop `"+n+"`")
		}
	}
	for _, n := range tableFirstCells(sections["Properties"]) {
		if !a.known[n] {
			problems = append(problems, "Properties names `"+n+"`, which is no exported field or method")
		}
	}
	for _, m := range calledNames.FindAllStringSubmatch(sections["Properties"], -1) {
		if !a.funcs[m[1]] {
			problems = append(problems, "Properties names `"+m[1]+"(...)`, which is no exported method or function")
		}
	}
	for _, n := range sortedKeys(a.exposed) {
		if !strings.Contains(sections["Properties"], "`"+n+"`") && !strings.Contains(sections["Properties"], "`"+n+"(") {
			problems = append(problems, "the Properties section does not name `"+n+"`")
		}
	}
	return problems
}

// tableFirstCells are the names in the first cells of a section's table
// rows (not the header or the separator).
func tableFirstCells(section string) []string {
	var out []string
	for _, l := range strings.Split(section, "\n") {
		if !strings.HasPrefix(l, "|") || strings.HasPrefix(l, "| ---") || strings.HasPrefix(l, "|---") {
			continue
		}
		cells := strings.Split(l, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range firstCellNames.FindAllStringSubmatch(cells[1], -1) {
			out = append(out, m[1])
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestCheckReadme: the check finds a section out of order, a missing or
// invented prop, and a missing or invented property.
func TestCheckReadme(t *testing.T) {
	a := api{
		props:   map[string]bool{"Table": true, "AlarmTopic": true},
		exposed: map[string]bool{"Queue": true, "GrantRead": true},
		known:   map[string]bool{"Queue": true, "GrantRead": true, "Table": true, "AlarmTopic": true, "Days": true},
		funcs:   map[string]bool{"GrantRead": true},
	}
	good := "# x\n\nintro\n\n## Usage\n\n```go\n## not a heading\n```\n\n## Props (`XProps`)\n\n| name | type | default | description |\n| --- | --- | --- | --- |\n" +
		"| `Table` | `ITable` | required | t |\n| `AlarmTopic` | `ITopic` | none | a |\n\n## Properties\n\n| name | type | description |\n| --- | --- | --- |\n" +
		"| `Queue` | `IQueue` | q |\n\n`GrantRead(grantee)` reads.\n\n## Defaults\n\n- x\n\n## Diagram\n\n```text\na\n```\n\n## More\n"
	tests := []struct {
		name, md, want string // want: a substring of the one problem, "" for none
	}{
		{"in order", good, ""},
		{"usage after props", strings.Replace(strings.Replace(good, "## Usage", "## Tmp", 1), "## Props (`XProps`)", "## Usage", 1), "section 1"},
		{"no diagram", strings.Replace(good, "## Diagram", "## Architecture", 1), "section 5"},
		{"a prop without a row", strings.Replace(good, "| `AlarmTopic` | `ITopic` | none | a |\n", "", 1), "no row for the prop `AlarmTopic`"},
		{"an invented prop", strings.Replace(good, "| `Table` |", "| `Tabel` | x | x | x |\n| `Table` |", 1), "`Tabel`, which is no prop field"},
		{"a property not named", strings.Replace(good, "`GrantRead(grantee)`", "GrantRead", 1), "does not name `GrantRead`"},
		{"an invented method", strings.Replace(good, "reads.", "reads; `GrantWrite(grantee)` writes.", 1), "`GrantWrite(...)`, which is no exported method"},
		{"an invented property", strings.Replace(good, "| `Queue` |", "| `Queue`, `Topic` |", 1), "`Topic`, which is no exported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := checkReadme(tc.md, a)
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("problems %q, want none", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Errorf("problems %q, want one containing %q", got, tc.want)
			}
		})
	}
}
