package cuda

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHeadersBuildInARuntimeProgram compiles every header under include/cuzk
// into one CUDA runtime-API program (nvcc's host and device passes, and its
// host-side registration of kernels and __constant__ variables), with a
// kernel that instantiates the field arithmetic. The kernel engine builds
// device code only (-fatbin), so this is what catches a header whose device
// declarations the host pass cannot see.
func TestHeadersBuildInARuntimeProgram(t *testing.T) {
	nvcc, err := exec.LookPath("nvcc")
	if err != nil {
		t.Skip("nvcc not installed (run `go run mage.go toolchain:install`): this test needs the real compiler")
	}
	headers, err := filepath.Glob(filepath.Join("include", "cuzk", "*.cuh"))
	require.NoError(t, err)
	require.NotEmpty(t, headers)
	var src strings.Builder
	for _, h := range headers {
		fmt.Fprintf(&src, "#include \"cuzk/%s\"\n", filepath.Base(h))
	}
	src.WriteString(`
__global__ void mul_all(cuzk::Fr* r, cuzk::ec::Fp* p, cuzk::ec::Fp2* q) {
  r[0] = r[0] * r[1];
  p[0] = p[0] * p[1];
  q[0] = q[0] * q[1];
}
int main() {
  mul_all<<<1, 1>>>(nullptr, nullptr, nullptr);
  return 0;
}
`)
	dir := t.TempDir()
	cu := filepath.Join(dir, "headers.cu")
	require.NoError(t, os.WriteFile(cu, []byte(src.String()), 0o600))
	out, err := exec.Command(nvcc, "-arch=sm_80", "-I", "include", "-c", cu, "-o", filepath.Join(dir, "headers.o")).CombinedOutput()
	require.NoError(t, err, "nvcc on a program including every header:\n%s", out)
}
