package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// unitSuffixes end a default's name when its prop's type carries no unit
// (DefaultFireTimeoutSec is the default of FireTimeout).
var unitSuffixes = []string{"Sec", "Minutes", "Hours", "Days", "MiB"}

// TestPropDefaultsNameProps: a constant in a block documented as
// "Defaults of <the> ... props" is the default of a prop of that package:
// Default<Prop>[unit] names a field of one of its ...Props structs. A
// fixed setting that no prop changes is documented as such, in a block of
// its own, so a reader does not look for a prop that does not exist.
func TestPropDefaultsNameProps(t *testing.T) {
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
		if strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") && !strings.Contains(f, "/internal/") {
			byPkg[path.Dir(f)] = append(byPkg[path.Dir(f)], f)
		}
	}
	checked := 0
	for dir, files := range byPkg {
		fset := token.NewFileSet()
		props := map[string]bool{}
		var defaults []defaultOf
		for _, f := range files {
			file, err := parser.ParseFile(fset, filepath.Join(root, f), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range file.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				for _, sp := range g.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						if st, ok := sp.Type.(*ast.StructType); ok && strings.HasSuffix(sp.Name.Name, "Props") {
							for _, field := range st.Fields.List {
								for _, n := range field.Names {
									props[n.Name] = true
								}
							}
						}
					case *ast.ValueSpec:
						if g.Tok == token.CONST && g.Doc != nil && strings.HasPrefix(g.Doc.Text(), "Defaults of") {
							for _, n := range sp.Names {
								defaults = append(defaults, defaultOf{n, sp.Doc})
							}
						}
					}
				}
			}
		}
		for _, d := range defaults {
			checked++
			if prop := d.prop(props); prop == "" {
				pos := fset.Position(d.name.Pos())
				rel, _ := filepath.Rel(root, pos.Filename)
				t.Errorf("%s:%d: %s is in a \"Defaults of\" block, but no prop of %s is named by it (Default<Prop>[%s]) or by its comment: "+
					"name the prop, or move the constant to a block that says no prop changes it",
					rel, pos.Line, d.name.Name, dir, strings.Join(unitSuffixes, "|"))
			}
		}
	}
	if checked == 0 {
		t.Fatal("found no \"Defaults of\" constant under constructs/; did the convention change?")
	}
	t.Logf("checked %d prop defaults", checked)
}

// defaultOf is a constant of a "Defaults of" block.
type defaultOf struct {
	name *ast.Ident
	doc  *ast.CommentGroup
}

// prop is the prop d is the default of: the one its name names
// (Default<Prop>, with a unit suffix when the prop's type has none), else
// the one its own comment names as such ("DefaultDist is DistPath's
// default", "the default of DistPath").
func (d defaultOf) prop(props map[string]bool) string {
	if rest, ok := strings.CutPrefix(d.name.Name, "Default"); ok {
		names := []string{rest}
		for _, u := range unitSuffixes {
			if p, ok := strings.CutSuffix(rest, u); ok {
				names = append(names, p)
			}
		}
		if i := slices.IndexFunc(names, func(p string) bool { return props[p] }); i >= 0 {
			return names[i]
		}
	}
	if d.doc != nil {
		text := d.doc.Text()
		for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if props[w] && (strings.Contains(text, w+"'s default") || strings.Contains(text, "default of "+w)) {
				return w
			}
		}
	}
	return ""
}
