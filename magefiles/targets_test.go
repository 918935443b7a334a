package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestTargetsAreDocumented checks that every exported target (a function or
// a method on a namespace, in the mage-tagged files) has a doc comment that
// starts with its name's verb form: mage -l prints its first sentence.
func TestTargetsAreDocumented(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	namespaces := map[string]bool{} // types declared as mg.Namespace: their methods are targets
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if sel, ok := ts.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Namespace" {
					namespaces[ts.Name.Name] = true
				}
			}
			return true
		})
	}
	targets := 0
	for _, f := range parsed {
		name := fset.Position(f.Pos()).Filename
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() || (fn.Recv != nil && !namespaces[receiver(fn)]) {
				continue // a method of a plain type (an error's Error) is no target
			}
			targets++
			doc := strings.TrimSpace(fn.Doc.Text())
			if !strings.HasPrefix(doc, fn.Name.Name+" ") {
				t.Errorf("%s: target %s: doc comment must start with %q (mage -l prints it), have %q", name, fn.Name.Name, fn.Name.Name+" ", doc)
			}
		}
	}
	if targets < 10 {
		t.Fatalf("found %d targets in %d files: the magefiles moved?", targets, len(files))
	}
}

// receiver names a method's receiver type.
func receiver(fn *ast.FuncDecl) string {
	t := fn.Recv.List[0].Type
	if star, ok := t.(*ast.StarExpr); ok {
		t = star.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
