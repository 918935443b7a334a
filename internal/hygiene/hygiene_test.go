package hygiene

import (
	"bytes"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxTracked is the largest tracked file allowed outside largeFixtures.
const maxTracked = 1 << 20

// largeFixtures are tracked files allowed to exceed maxTracked: test data
// that cannot be generated at test time. Each entry needs a reason.
var largeFixtures = map[string]string{}

// binaryMagics start executable formats that must never be tracked.
var binaryMagics = map[string][]byte{
	"ELF":         []byte("\x7fELF"),
	"Mach-O 64":   {0xcf, 0xfa, 0xed, 0xfe},
	"Mach-O 32":   {0xce, 0xfa, 0xed, 0xfe},
	"Mach-O fat":  {0xca, 0xfe, 0xba, 0xbe},
	"PE (MZ)":     []byte("MZ"),
	"wasm":        []byte("\x00asm"),
	"CUDA fatbin": {0x50, 0xed, 0x55, 0xba},
}

// repoRoot returns the top of the work tree; the test skips outside git.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git work tree (git rev-parse: %v): nothing tracked to check", err)
	}
	return strings.TrimSpace(string(out))
}

// tracked returns every tracked path with its git mode ("100644", "100755").
func tracked(t *testing.T, root string) map[string]string {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "ls-files", "-s", "-z").Output()
	require.NoError(t, err, "git ls-files")
	files := map[string]string{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, name, ok := bytes.Cut(rec, []byte{'\t'})
		require.True(t, ok, "ls-files record %q", rec)
		files[string(name)] = strings.Fields(string(meta))[0]
	}
	require.NotEmpty(t, files)
	return files
}

// problem says why content (with git mode mode) may not be tracked, or "".
func problem(name, mode string, content []byte) string {
	if _, ok := largeFixtures[name]; !ok && len(content) > maxTracked {
		return "larger than 1 MiB"
	}
	for format, magic := range binaryMagics {
		if bytes.HasPrefix(content, magic) {
			if format == "PE (MZ)" && !bytes.Contains(content[:min(len(content), 512)], []byte("PE\x00\x00")) {
				continue // text starting with "MZ" is not a PE executable
			}
			return "an executable binary (" + format + ")"
		}
	}
	if mode == "100755" && !bytes.HasPrefix(content, []byte("#!")) {
		return "executable but not a script"
	}
	return ""
}

func TestProblem(t *testing.T) {
	tests := []struct {
		name, mode string
		content    []byte
		want       string
	}{
		{"a.go", "100644", []byte("package a\n"), ""},
		{".ci/run", "100755", []byte("#!/usr/bin/env bash\n"), ""},
		{"bench/gnark/gnark", "100755", []byte("\x7fELF\x02\x01\x01"), "an executable binary (ELF)"},
		{"x.fatbin", "100644", []byte{0x50, 0xed, 0x55, 0xba, 1, 0}, "an executable binary (CUDA fatbin)"},
		{"tool", "100755", []byte("data"), "executable but not a script"},
		{"big.log", "100644", bytes.Repeat([]byte("x"), maxTracked+1), "larger than 1 MiB"},
		{"MZ.md", "100644", []byte("MZ is a prefix here"), ""},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, problem(tt.name, tt.mode, tt.content), tt.name)
	}
}

// TestTrackedFilesAreSources fails when a tracked file is an executable
// binary or larger than 1 MiB (largeFixtures excepted).
func TestTrackedFilesAreSources(t *testing.T) {
	root := repoRoot(t)
	files := tracked(t, root)
	for name, mode := range files {
		if mode == "160000" || mode == "120000" {
			continue // submodule or symlink: no content of its own here
		}
		content, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		if os.IsNotExist(err) {
			continue // deleted in the work tree, not yet committed
		}
		require.NoError(t, err)
		if p := problem(name, mode, content); p != "" {
			t.Errorf("%s is tracked but is %s: remove it from git (git rm --cached) and ignore it", name, p)
		}
	}
	for name := range largeFixtures {
		_, ok := files[name]
		assert.True(t, ok, "largeFixtures lists %s, which is not tracked: drop the entry", name)
	}
}

// braces matches a shell-style alternative list in a cited log name:
// "partition-{before-lazy,lazy}.log".
var braces = regexp.MustCompile(`\{([^{}]*)\}`)

// expand returns the names a citation stands for.
func expand(s string) []string {
	m := braces.FindStringSubmatchIndex(s)
	if m == nil {
		return []string{s}
	}
	var out []string
	for _, alt := range strings.Split(s[m[2]:m[3]], ",") {
		out = append(out, expand(s[:m[0]]+alt+s[m[1]:])...)
	}
	return out
}

func TestExpand(t *testing.T) {
	assert.Equal(t, []string{"a-x.log", "a-y.log"}, expand("a-{x,y}.log"))
	assert.Equal(t, []string{"ac", "ad", "bc", "bd"}, expand("{a,b}{c,d}"))
	assert.Equal(t, []string{"plain.log"}, expand("plain.log"))
}

// citedRuns returns the docs/runs entries the perf docs name: file names
// (with {a,b} alternatives expanded) and directories ("docs/runs/x/").
func citedRuns(t *testing.T, root string) (files, dirs map[string]bool) {
	t.Helper()
	docs, err := filepath.Glob(filepath.Join(root, "docs", "perf*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, docs, "docs/perf*.md")
	files, dirs = map[string]bool{}, map[string]bool{}
	token := regexp.MustCompile("[`(,\\s]([A-Za-z0-9_./{},-]+\\.(?:log|cu|txt|json|csv))")
	dir := regexp.MustCompile("docs/runs/([A-Za-z0-9_.-]+)/")
	for _, d := range docs {
		b, err := os.ReadFile(d)
		require.NoError(t, err)
		for _, m := range token.FindAllStringSubmatch(string(b), -1) {
			for _, name := range expand(m[1]) {
				files[path.Base(name)] = true
			}
		}
		for _, m := range dir.FindAllStringSubmatch(string(b), -1) {
			dirs[m[1]] = true
		}
	}
	return files, dirs
}

// TestRunLogsAreCited fails when docs/runs holds a file no docs/perf*.md
// cites (by name, or its directory as docs/runs/<dir>/), and when a cited
// docs/runs path is missing.
func TestRunLogsAreCited(t *testing.T) {
	root := repoRoot(t)
	files, dirs := citedRuns(t, root)
	for name := range tracked(t, root) {
		rel, ok := strings.CutPrefix(name, "docs/runs/")
		if !ok {
			continue
		}
		if sub, _, nested := strings.Cut(rel, "/"); nested && dirs[sub] {
			continue
		}
		assert.True(t, files[path.Base(rel)], "%s is cited by no docs/perf*.md: delete it or cite it", name)
	}
	for sub := range dirs {
		st, err := os.Stat(filepath.Join(root, "docs", "runs", sub))
		if assert.NoError(t, err, "docs/perf*.md cites docs/runs/%s/", sub) {
			assert.True(t, st.IsDir(), "docs/runs/%s", sub)
		}
	}
}
