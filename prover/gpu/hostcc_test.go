package gpu

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildHostKernels compiles testdata/<name>.cc, which includes kernel
// sources, with the host C++ compiler and returns the binary, skipping
// visibly where no compiler exists: the kernels' code then runs on the CPU.
// It reads every source and header the compiler used, so that go test's
// result cache, which keys on the files a test opens, reruns the test when
// a kernel source changes.
func buildHostKernels(t *testing.T, name string) string {
	t.Helper()
	cxx, err := exec.LookPath("g++")
	if err != nil {
		what := strings.ToUpper(strings.TrimSuffix(name, "_emulate"))
		t.Skipf("no host C++ compiler (g++) to emulate the %s kernels: %v", what, err)
	}
	bin := filepath.Join(t.TempDir(), name)
	deps := bin + ".d"
	out, err := exec.Command(cxx, "-O2", "-std=c++17", "-MMD", "-MF", deps, "-I", "../../cuda/include",
		"-I", "../../cuda/kernels", "-o", bin, filepath.Join("testdata", name+".cc")).CombinedOutput()
	require.NoError(t, err, "compile testdata/%s.cc for the host:\n%s", name, out)
	rule, err := os.ReadFile(deps)
	require.NoError(t, err)
	files := hostDeps(string(rule))
	require.NotEmpty(t, files, "no dependencies in %s", deps)
	for _, f := range files {
		_, err := os.ReadFile(f)
		require.NoError(t, err, "kernel source %s", f)
	}
	return bin
}

// hostDeps returns the prerequisites of the make rule the compiler wrote
// with -MMD ("target: a b \\\n c"); paths hold no spaces here.
func hostDeps(rule string) []string {
	_, list, ok := strings.Cut(rule, ":")
	if !ok {
		return nil
	}
	return strings.Fields(strings.ReplaceAll(list, "\\\n", " "))
}
