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
	targets := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
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
