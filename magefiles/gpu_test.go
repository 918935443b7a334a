package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// TestGPUPackagesHoldEveryGPUTest: `go run mage.go gpu` builds the test
// binaries of gpuPackages for the GPU runner; a package whose tests open a
// GPU (they name ErrNoGPU, the sentinel a test skips on) and is missing
// from the list would never run its GPU side anywhere.
func TestGPUPackagesHoldEveryGPUTest(t *testing.T) {
	listed := gpuGoStrings(t, "gpuPackages")
	found := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (d.Name() == "testdata" || d.Name() == "magefiles" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "ErrNoGPU") {
			rel, err := filepath.Rel("..", filepath.Dir(path))
			if err != nil {
				return err
			}
			found[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for p := range found {
		want = append(want, p)
	}
	sort.Strings(want)
	sort.Strings(listed)
	if strings.Join(want, " ") != strings.Join(listed, " ") {
		t.Errorf("gpuPackages = %v; the packages whose tests skip on ErrNoGPU are %v", listed, want)
	}
}

// gpuGoStrings returns the string literals of the declaration of name in
// gpu.go (a const or a var list), read from its source: gpu.go builds only
// with the mage tag, which go vet and go test leave off.
func gpuGoStrings(t *testing.T, name string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "gpu.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != name {
			return true
		}
		ast.Inspect(vs, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, _ := strconv.Unquote(lit.Value)
				out = append(out, s)
			}
			return true
		})
		return false
	})
	if len(out) == 0 {
		t.Fatalf("gpu.go: no %s found", name)
	}
	return out
}

// TestGPUSkipLeavesOutOnlyHostTests: run.sh leaves out the tests gpuSkip
// matches, so each must run without a device (every CPU suite runs it,
// and no GPU run would): none opens one (testDevice, New, ErrNoGPU) in its
// own body. The pattern must still match some test.
func TestGPUSkipLeavesOutOnlyHostTests(t *testing.T) {
	pattern := gpuGoStrings(t, "gpuSkip")[0]
	skip := regexp.MustCompile(pattern)
	matched := 0
	for _, p := range gpuGoStrings(t, "gpuPackages") {
		files, err := filepath.Glob(filepath.Join("..", p, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, src, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Test") || !skip.MatchString(fn.Name.Name) {
					continue
				}
				matched++
				body := string(src[fset.Position(fn.Body.Pos()).Offset:fset.Position(fn.Body.End()).Offset])
				for _, dev := range []string{"testDevice(", "ErrNoGPU", "New("} {
					if strings.Contains(body, dev) {
						t.Errorf("%s: %s matches gpuSkip (%s) but opens a device (%s): run.sh would never run it", path, fn.Name.Name, pattern, dev)
					}
				}
			}
		}
	}
	if matched == 0 {
		t.Errorf("gpuSkip (%s) matches no test of gpuPackages", pattern)
	}
}
