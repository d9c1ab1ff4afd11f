package envvars

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAllListsEveryConstant: a name declared here but left out of All
// would be refused by the synth tests' Unknown check.
func TestAllListsEveryConstant(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "envvars.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			for _, s := range g.Specs {
				for _, n := range s.(*ast.ValueSpec).Names {
					declared = append(declared, n.Name)
				}
			}
		}
	}
	if len(declared) != len(All) {
		t.Fatalf("envvars.go declares %d names, All lists %d: add each new constant to All", len(declared), len(All))
	}
	for i, n := range All {
		if slices.Contains(All[:i], n) {
			t.Errorf("%s is in All twice (two constants share one name)", n)
		}
	}
}

// TestEveryNameIsRead: every name is read by the code that runs in a
// function (lambdas/*, internal/*, cmd/*, and the public packages an
// adopter's function imports), directly or through an alias constant
// such as contract.EnvVar; a name no function reads is dead
// configuration.
func TestEveryNameIsRead(t *testing.T) {
	consts := map[string]string{} // constant name -> value
	f, err := parser.ParseFile(token.NewFileSet(), "envvars.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.ValueSpec); ok {
			for i, id := range s.Names {
				if i >= len(s.Values) {
					break
				}
				if lit, ok := s.Values[i].(*ast.BasicLit); ok {
					consts[id.Name] = strings.Trim(lit.Value, `"`)
				}
			}
		}
		return true
	})
	type file struct {
		pkg string
		ast *ast.File
	}
	var files []file
	for _, root := range []string{"lambdas", "internal", "cmd", "contract", "futureevents", "deferredjobs"} {
		err := filepath.WalkDir(filepath.Join("..", "..", "..", root), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "envvars" || d.Name() == "bench" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				return err
			}
			files = append(files, file{f.Name.Name, f})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Aliases: "pkg.Name" (or "Name" inside pkg) = envvars.X.
	alias := map[string]string{}
	for _, f := range files {
		ast.Inspect(f.ast, func(n ast.Node) bool {
			if s, ok := n.(*ast.ValueSpec); ok {
				for i, id := range s.Names {
					if i < len(s.Values) {
						if x, ok := envvarsRef(s.Values[i]); ok {
							alias[f.pkg+"."+id.Name] = x
						}
					}
				}
			}
			return true
		})
	}
	read := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f.ast, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec: // an alias declaration is not a read
				for _, v := range n.Values {
					if _, ok := envvarsRef(v); !ok {
						ast.Inspect(v, func(m ast.Node) bool { markRead(m, f.pkg, alias, read); return true })
					}
				}
				return false
			default:
				markRead(n, f.pkg, alias, read)
			}
			return true
		})
	}
	for name, value := range consts {
		if !read[name] {
			t.Errorf("envvars.%s (%s) is read by no function: delete it, or read it in the main that needs it", name, value)
		}
	}
}

// envvarsRef reports the X of an expression envvars.X.
func envvarsRef(e ast.Expr) (string, bool) {
	s, ok := e.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	if id, ok := s.X.(*ast.Ident); ok && id.Name == "envvars" {
		return s.Sel.Name, true
	}
	return "", false
}

// markRead records the name n reads: envvars.X, an alias pkg.Name, or an
// alias Name inside its own package.
func markRead(n ast.Node, pkg string, alias map[string]string, read map[string]bool) {
	switch n := n.(type) {
	case *ast.SelectorExpr:
		if x, ok := envvarsRef(n); ok {
			read[x] = true
		} else if id, ok := n.X.(*ast.Ident); ok && alias[id.Name+"."+n.Sel.Name] != "" {
			read[alias[id.Name+"."+n.Sel.Name]] = true
		}
	case *ast.Ident:
		if x := alias[pkg+"."+n.Name]; x != "" {
			read[x] = true
		}
	}
}
