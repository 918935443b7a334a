package kbuild_test

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

func TestParseIncludes(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []kbuild.Directive
		err  string
	}{
		{"quoted and angle", "#include \"a.cuh\"\n#include <b/c.h>\n",
			[]kbuild.Directive{{Path: "a.cuh", Line: 1}, {Path: "b/c.h", Angle: true, Line: 2}}, ""},
		{"spaces around hash", "  #   include\t\"x.cuh\"  // trailing\n", []kbuild.Directive{{Path: "x.cuh", Line: 1}}, ""},
		{"line comment", "// #include \"no.cuh\"\n", nil, ""},
		{"block comment spanning lines", "/* a\n#include \"no.cuh\"\n*/\n#include \"yes.cuh\"\n",
			[]kbuild.Directive{{Path: "yes.cuh", Line: 4}}, ""},
		{"continued directive", "#include \\\n \"cont.cuh\"\n", []kbuild.Directive{{Path: "cont.cuh", Line: 1}}, ""},
		{"string literal is not a directive", "const char* s = \"#include \\\"no.cuh\\\"\";\n", nil, ""},
		{"include_next is not include", "#include_next <x.h>\n", nil, ""},
		{"inside #if still counted", "#if 0\n#include \"maybe.cuh\"\n#endif\n", []kbuild.Directive{{Path: "maybe.cuh", Line: 2}}, ""},
		{"computed include refused", "#define H \"x.cuh\"\n#include H\n", nil, "computed #include"},
		{"unterminated", "#include \"x.cuh\n", nil, "unterminated"},
		{"no name", "#include\n", nil, "without a file name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := kbuild.ParseIncludes([]byte(tc.src))
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func FuzzParseIncludes(f *testing.F) {
	for _, s := range []string{"#include \"a.cuh\"\n", "/* x */ # include <y>", "#include \\\n\"z\"", "\"#include\"", "/*", "#include <", "'\\"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		ds, err := kbuild.ParseIncludes(src)
		if err != nil {
			return
		}
		for _, d := range ds {
			if d.Path == "" || d.Line < 1 || strings.ContainsAny(d.Path, "\n") {
				t.Fatalf("bad directive %+v from %q", d, src)
			}
			if d.Line > bytes.Count(src, []byte("\n"))+1 {
				t.Fatalf("line %d past end of %q", d.Line, src)
			}
		}
	})
}

// nvccDeps returns the project files nvcc -M lists for source, relative to root.
func nvccDeps(t *testing.T, nvcc, root string, includes []string, source string) []string {
	t.Helper()
	args := []string{"-M"}
	for _, inc := range includes {
		args = append(args, "-I", inc)
	}
	cmd := exec.Command(nvcc, append(args, source)...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	var deps []string
	_, rules, ok := bytes.Cut(out, []byte(":")) // drop the make target
	require.True(t, ok, string(out))
	sc := bufio.NewScanner(bytes.NewReader(rules))
	for sc.Scan() {
		for _, f := range strings.Fields(strings.TrimSuffix(sc.Text(), "\\")) {
			if filepath.IsAbs(f) {
				continue // toolkit and system headers: covered by the toolchain identity
			}
			deps = append(deps, filepath.ToSlash(filepath.Clean(f)))
		}
	}
	sort.Strings(deps)
	return deps
}

func scannedInputs(u kbuild.Unit) []string {
	var out []string
	for _, in := range u.Inputs {
		out = append(out, in.Path)
	}
	return out
}

func TestScannerMatchesNvccOnFixture(t *testing.T) {
	f := newFixture(t)
	units, err := f.engine().Plan(context.Background())
	require.NoError(t, err)
	require.Len(t, units, 3)
	for _, u := range units {
		assert.Equal(t, nvccDeps(t, "nvcc", f.root, []string{"cuda/include"}, u.Source), scannedInputs(u), u.Name)
	}
}
