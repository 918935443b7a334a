package gpu

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildHostKernels compiles testdata/<name>.cc, which includes kernel
// sources, with the host C++ compiler and returns the binary, skipping
// visibly where no compiler exists: the kernels' code then runs on the CPU.
func buildHostKernels(t *testing.T, name string) string {
	t.Helper()
	cxx, err := exec.LookPath("g++")
	if err != nil {
		what := strings.ToUpper(strings.TrimSuffix(name, "_emulate"))
		t.Skipf("no host C++ compiler (g++) to emulate the %s kernels: %v", what, err)
	}
	bin := filepath.Join(t.TempDir(), name)
	out, err := exec.Command(cxx, "-O2", "-std=c++17", "-I", "../../cuda/include", "-I", "../../cuda/kernels",
		"-o", bin, filepath.Join("testdata", name+".cc")).CombinedOutput()
	require.NoError(t, err, "compile testdata/%s.cc for the host:\n%s", name, out)
	return bin
}
