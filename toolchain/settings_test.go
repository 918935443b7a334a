package toolchain_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"github.com/cuzk-dev/cuzk/daemon/env"
	"github.com/cuzk-dev/cuzk/internal/structflag"
	"github.com/cuzk-dev/cuzk/toolchain"
)

const (
	mod         = "github.com/cuzk-dev/cuzk"
	environPath = mod + "/internal/environ"
	settingsDoc = "docs/settings.md"
	// pinRule is the settings table's row for the pins' variables.
	pinRule = "CUZK_<KEY>"
)

// notVariables are CUZK_ names that the code and docs use for something
// other than a variable: what each is, and the one package that spells it.
var notVariables = map[string]string{
	"CUZK_TIMING": "daemon/engine", // the message of the daemon's timing log line
}

// foreignLiterals are the files allowed to spell a variable of another
// package, and why. Each name they spell is still checked to exist.
var foreignLiterals = map[string]string{}

// reName finds CUZK_ names in Go literals and Markdown; a name that ends in
// "_" followed by "<" or "*" is a family (CUZK_DAEMON_<KEY>, CUZK_DAEMON_*).
var reName = regexp.MustCompile(`CUZK_[A-Z0-9_]*(<KEY>|\*)?`)

// decl is one registration found in the source.
type decl struct {
	name, dir string // the variable (or family prefix) and its owner's directory
	prefix    bool
	at        string // file:line
}

// repoRoot is the main module's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	require.NoError(t, err, "go list -m")
	return strings.TrimSpace(string(out))
}

// goFiles parses every non-test Go file of the main module, whatever its
// build tags (magefiles too): directory relative to root → files.
func goFiles(t *testing.T, root string) (map[string][]*ast.File, *token.FileSet) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // a nested module
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkgs[filepath.ToSlash(rel)] = append(pkgs[filepath.ToSlash(rel)], f)
		return nil
	})
	require.NoError(t, err)
	return pkgs, fset
}

// stringConsts are a package's constants and variables whose value is one
// string literal: name → value.
func stringConsts(files []*ast.File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || (g.Tok != token.CONST && g.Tok != token.VAR) {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						if bl, ok := vs.Values[i].(*ast.BasicLit); ok && bl.Kind == token.STRING {
							if v, err := strconv.Unquote(bl.Value); err == nil {
								out[n.Name] = v
							}
						}
					}
				}
			}
		}
	}
	return out
}

// registrations finds every environ.Register and environ.RegisterPrefix
// call of the module's code. Its first argument must be a literal or a
// constant of the calling package: the owner spells its own name.
func registrations(t *testing.T, pkgs map[string][]*ast.File, fset *token.FileSet) []decl {
	t.Helper()
	var out []decl
	for dir, files := range pkgs {
		consts := stringConsts(files)
		for _, f := range files {
			local := ""
			for _, imp := range f.Imports {
				if p, _ := strconv.Unquote(imp.Path.Value); p == environPath {
					local = "environ"
					if imp.Name != nil {
						local = imp.Name.Name
					}
				}
			}
			if local == "" {
				continue
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Register" && sel.Sel.Name != "RegisterPrefix") {
					return true
				}
				if x, ok := sel.X.(*ast.Ident); !ok || x.Name != local {
					return true
				}
				at := fset.Position(call.Pos()).String()
				name := ""
				switch a := call.Args[0].(type) {
				case *ast.BasicLit:
					name, _ = strconv.Unquote(a.Value)
				case *ast.Ident:
					name = consts[a.Name]
				}
				if assert.NotEmpty(t, name, "%s: register with a string literal or a constant of the package itself", at) {
					out = append(out, decl{name: name, dir: dir, prefix: sel.Sel.Name == "RegisterPrefix", at: at})
				}
				return true
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// names says who owns a CUZK_ name: its registration, the pins' rule, a
// family and its keys, or one of notVariables.
type names struct {
	exact    map[string]decl
	prefixes map[string]decl
	pins     map[string]bool
	derived  map[string]map[string]bool // family prefix → the names under it
}

func newNames(t *testing.T, decls []decl) names {
	n := names{exact: map[string]decl{}, prefixes: map[string]decl{}, pins: map[string]bool{}, derived: map[string]map[string]bool{}}
	for _, d := range decls {
		m := n.exact
		if d.prefix {
			m = n.prefixes
		}
		if prev, dup := m[d.name]; dup {
			t.Errorf("%s is registered twice: %s (%s) and %s (%s)", d.name, prev.dir, prev.at, d.dir, d.at)
		}
		m[d.name] = d
	}
	for _, v := range toolchain.PinVariables() {
		n.pins[v] = true
	}
	// The families and how their names are made. A family registered
	// without a rule here fails: teach this test its names.
	keys, err := structflag.Keys(reflect.TypeFor[assembly.Config]())
	require.NoError(t, err)
	daemon := map[string]bool{}
	for k := range keys {
		daemon[env.Var(k)] = true // as cuzk-daemon's loadConfig reads them
	}
	n.derived[env.Prefix] = daemon
	for p, d := range n.prefixes {
		assert.Contains(t, n.derived, p, "%s: family %s has no rule in this test for the names under it", d.at, p)
	}
	return n
}

// owner returns the directory of the package that owns the name (a
// variable, or a family written CUZK_DAEMON_<KEY>, CUZK_DAEMON_* or
// CUZK_DAEMON_).
func (n names) owner(name string) (string, bool) {
	if fam, ok := strings.CutSuffix(strings.TrimSuffix(name, "*"), "<KEY>"); ok || strings.HasSuffix(name, "*") || strings.HasSuffix(name, "_") {
		if fam == "CUZK_" || name == "CUZK_*" {
			return "", true // the whole namespace
		}
		if name == pinRule {
			return "toolchain", true
		}
		d, ok := n.prefixes[fam]
		return d.dir, ok
	}
	if d, ok := n.exact[name]; ok {
		return d.dir, true
	}
	if n.pins[name] {
		return "toolchain", true
	}
	if dir, ok := notVariables[name]; ok {
		return dir, true
	}
	for p, d := range n.prefixes {
		if n.derived[p][name] {
			return d.dir, true
		}
	}
	return "", false
}

// docFiles are README.md and docs/*.md.
func docFiles(t *testing.T, root string) []string {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	return append([]string{filepath.Join(root, "README.md")}, docs...)
}

// TestSettingsDocumented holds README.md and docs/*.md to the code: every
// CUZK_ name they write is a variable some package declares (or a pin's,
// or one of a declared family's, as the daemon's config keys make them),
// and docs/settings.md has one row per declaration naming its owner.
func TestSettingsDocumented(t *testing.T) {
	root := repoRoot(t)
	pkgs, fset := goFiles(t, root)
	decls := registrations(t, pkgs, fset)
	require.NotEmpty(t, decls)
	n := newNames(t, decls)

	for _, path := range docFiles(t, root) {
		rel, _ := filepath.Rel(root, path)
		f, err := os.Open(path)
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for line := 1; sc.Scan(); line++ {
			for _, name := range reName.FindAllString(sc.Text(), -1) {
				_, ok := n.owner(name)
				assert.True(t, ok, "%s:%d: %s is no variable the code declares (internal/environ), no pin and none of a family's", rel, line, name)
			}
		}
		require.NoError(t, sc.Err())
		_ = f.Close() // read only
	}

	rows := settingsRows(t, filepath.Join(root, settingsDoc))
	want := map[string]string{pinRule: "toolchain"}
	for _, d := range decls {
		name := d.name
		if d.prefix {
			name += "<KEY>"
		}
		want[name] = d.dir
	}
	for name, dir := range want {
		got, ok := rows[name]
		if assert.True(t, ok, "%s has no row in %s: add | `%s` | `%s` | what it does |", name, settingsDoc, name, dir) {
			assert.Equal(t, dir, got, "%s: %s's owner", settingsDoc, name)
		}
	}
	for name := range rows {
		assert.Contains(t, want, name, "%s: row %s names no declaration", settingsDoc, name)
	}
}

// settingsRows reads the settings table: variable → owner directory.
func settingsRows(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	rows := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		rows[name] = strings.Trim(strings.TrimSpace(cells[1]), "`")
	}
	require.NotEmpty(t, rows, "%s: no table", path)
	return rows
}

// TestSettingsSpelledByTheirOwners fails for a Go string literal, outside
// tests, that spells a variable of another package (use the owner's
// constant, or toolchain.PinVariable) or a CUZK_ name nobody declares.
func TestSettingsSpelledByTheirOwners(t *testing.T) {
	root := repoRoot(t)
	pkgs, fset := goFiles(t, root)
	n := newNames(t, registrations(t, pkgs, fset))
	for dir, files := range pkgs {
		for _, f := range files {
			file := fset.Position(f.Package).Filename
			rel, _ := filepath.Rel(root, file)
			rel = filepath.ToSlash(rel)
			ast.Inspect(f, func(node ast.Node) bool {
				bl, ok := node.(*ast.BasicLit)
				if !ok || bl.Kind != token.STRING {
					return true
				}
				for _, name := range reName.FindAllString(bl.Value, -1) {
					if name == "CUZK_" {
						continue // the namespace: the pins loader's, and every CUZK_* filter's
					}
					owner, ok := n.owner(name)
					at := fset.Position(bl.Pos())
					if !assert.True(t, ok, "%s:%d: %s is declared by no package", rel, at.Line, name) {
						continue
					}
					if owner != dir && foreignLiterals[rel] != owner {
						t.Errorf("%s:%d: %s is %s's: use its constant", rel, at.Line, name, owner)
					}
				}
				return true
			})
		}
	}
}

// TestSettingsOwnersLinkedByMage: the mage targets load the pins from the
// environment they were started with, so the mage program must link every
// package that declares a variable, or that variable would be refused there.
func TestSettingsOwnersLinkedByMage(t *testing.T) {
	root := repoRoot(t)
	pkgs, fset := goFiles(t, root)
	cmd := exec.Command("go", "list", "-tags", "mage", "-deps", "./magefiles")
	cmd.Dir = root
	out, err := cmd.Output()
	require.NoError(t, err, "go list -tags mage -deps ./magefiles")
	linked := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		linked[p] = true
	}
	for _, d := range registrations(t, pkgs, fset) {
		assert.True(t, linked[mod+"/"+d.dir], "%s (%s): mage does not link %s: import it from magefiles", d.name, d.at, d.dir)
	}
}
