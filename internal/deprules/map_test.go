package deprules

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mapFile is the package map, relative to the repository root.
const mapFile = "docs/architecture.md"

// kinds are the values of the map's kind column.
var kinds = map[string]bool{"product": true, "main": true, "bench": true, "test": true, "tool": true}

// row is one line of the map's package table.
type row struct {
	dir, kind string
	line      int
}

// root is the repository root: the main module's directory.
func root(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}").Output()
	require.NoError(t, err, "go list -m")
	return strings.TrimSpace(string(out))
}

// readMap parses the table whose header's first cell is "package": one row
// per package, named by its directory in backquotes, then its kind.
func readMap(t *testing.T, path string) map[string]row {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err, "the package map")
	defer f.Close() // read only: a close error loses nothing
	rows := map[string]row{}
	inTable := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[0] == "package" {
			inTable = true
			continue
		}
		if !inTable || strings.HasPrefix(cells[0], "---") {
			continue
		}
		dir := strings.Trim(cells[0], "`")
		if !assert.True(t, len(cells) >= 3 && cells[0] == "`"+dir+"`" && dir != "",
			"%s:%d: a row is | `dir` | kind | responsibility |", mapFile, n) {
			continue
		}
		assert.True(t, kinds[cells[1]], "%s:%d: %s: kind %q is none of product, main, bench, test, tool", mapFile, n, dir, cells[1])
		if prev, dup := rows[dir]; dup {
			t.Errorf("%s:%d: %s has a row already at line %d", mapFile, n, dir, prev.line)
		}
		rows[dir] = row{dir: dir, kind: cells[1], line: n}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, rows, "%s: no package table (header | package | kind | responsibility |)", mapFile)
	return rows
}

// packageDirs lists every package of the main module and of the modules
// nested in it (not those under testdata): its directory relative to root →
// its name.
func packageDirs(t *testing.T, root string) map[string]string {
	t.Helper()
	dirs := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if name != "go.mod" {
			return nil
		}
		modDir := filepath.Dir(path)
		cmd := exec.Command("go", "list", "-e", "-f", "{{.Name}}\t{{.Dir}}", "./...")
		cmd.Dir = modDir
		cmd.Env = append(os.Environ(), "GOPROXY=off") // names only: never fetch a nested module's dependencies
		out, err := cmd.Output()
		if err != nil {
			return err
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			name, dir, _ := strings.Cut(line, "\t")
			rel, err := filepath.Rel(root, dir)
			if err != nil {
				return err
			}
			dirs[filepath.ToSlash(rel)] = name
		}
		return nil
	})
	require.NoError(t, err)
	return dirs
}

// TestMapNamesEveryPackage fails for a package without a row in
// docs/architecture.md and for a row without a package.
func TestMapNamesEveryPackage(t *testing.T) {
	root := root(t)
	rows := readMap(t, filepath.Join(root, mapFile))
	dirs := packageDirs(t, root)
	require.NotEmpty(t, dirs)
	for d := range dirs {
		_, ok := rows[d]
		assert.True(t, ok, "package %s has no row in %s: add one (| `%s` | kind | responsibility |)", d, mapFile, d)
	}
	for d, r := range rows {
		_, ok := dirs[d]
		assert.True(t, ok, "%s:%d: row %s names no package: remove or rename it", mapFile, r.line, d)
	}
}

// mayImport says whether a package of one kind may depend on one of another.
func mayImport(from, to string) bool {
	switch {
	case to == "main":
		return false
	case from == "product":
		return to == "product"
	case from == "tool":
		return to == "product" || to == "tool"
	default: // main, bench, test
		return true
	}
}

// TestKinds enforces the map's kind rules on every package's build
// dependencies (its tests may import more).
func TestKinds(t *testing.T) {
	rows := readMap(t, filepath.Join(root(t), mapFile))
	kindOf := func(path string) (string, bool) {
		r, ok := rows[strings.TrimPrefix(path, mod)]
		return r.kind, ok && strings.HasPrefix(path, mod)
	}
	for _, p := range listModule(t) {
		from, ok := kindOf(p.ImportPath)
		if !ok {
			continue // TestMapNamesEveryPackage names it
		}
		for _, dep := range p.Deps {
			if to, ok := kindOf(dep); ok {
				assert.True(t, mayImport(from, to), "%s (%s) depends on %s (%s): %s", p.ImportPath, from, dep, to, mapFile)
			}
		}
	}
}

// besideItsPackage says whether dir is a harness named after the package it
// sits in, as net/http/httptest sits in net/http: prover/r1cs/r1cstest.
func besideItsPackage(dir string) bool {
	parent, base := path.Split(dir)
	parent = strings.TrimSuffix(parent, "/")
	return parent != "" && base == path.Base(parent)+"test"
}

// TestTreesHoldTheirKinds keeps every measuring package in one tree and every
// harness out of the product's own packages: a bench package lives under
// bench/ and bench/ holds only bench packages and their mains; a test helper
// lives beside the package it serves, named after it (X/Xtest), or under an
// internal/ directory where it serves a whole tree; development tools live
// under an internal/ directory.
func TestTreesHoldTheirKinds(t *testing.T) {
	rows := readMap(t, filepath.Join(root(t), mapFile))
	for dir, r := range rows {
		underBench := dir == "bench" || strings.HasPrefix(dir, "bench/")
		underInternal := strings.HasPrefix(dir, "internal/") || strings.Contains(dir, "/internal/")
		switch r.kind {
		case "bench":
			assert.True(t, underBench, "%s:%d: %s is a benchmark: move it under bench/", mapFile, r.line, dir)
		case "test":
			assert.True(t, underInternal || besideItsPackage(dir),
				"%s:%d: %s is a test helper: move it beside the package it serves (X/Xtest) or under an internal/ directory", mapFile, r.line, dir)
		case "tool":
			assert.True(t, underInternal, "%s:%d: %s is a tool: move it under an internal/ directory", mapFile, r.line, dir)
		case "product":
			assert.False(t, underBench, "%s:%d: %s is product code under bench/", mapFile, r.line, dir)
		}
	}
}
