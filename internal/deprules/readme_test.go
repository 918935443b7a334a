package deprules

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeBinaries returns the source directories of the README's table under
// "## Binaries" (its second column), by line.
func readmeBinaries(t *testing.T, root string) map[string]int {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	defer f.Close() // read only
	dirs := map[string]int{}
	section := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			section = line == "## Binaries"
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if !section || !strings.HasPrefix(line, "|") || len(cells) < 3 {
			continue
		}
		if dir := strings.TrimSpace(cells[1]); strings.HasPrefix(dir, "`") {
			dirs[strings.Trim(dir, "`")] = n
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, dirs, "README.md: no table under \"## Binaries\" (| binary | source | where it is |)")
	return dirs
}

// TestReadmeSaysWhereEveryBinaryIs: every main package (the magefiles
// aside: `go run mage.go` runs them) has a row in the README's table of
// binaries, and every row names a main package.
func TestReadmeSaysWhereEveryBinaryIs(t *testing.T) {
	root := root(t)
	rows := readmeBinaries(t, root)
	mains := map[string]bool{}
	for dir, name := range packageDirs(t, root) {
		if name == "main" && dir != "magefiles" {
			mains[dir] = true
			_, ok := rows[dir]
			assert.True(t, ok, "README.md: the command in %s has no row under \"## Binaries\" saying where it is", dir)
		}
	}
	for dir, n := range rows {
		assert.True(t, mains[dir], "README.md:%d: %s is no command", n, dir)
	}
}
