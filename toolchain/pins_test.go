package toolchain_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/environ"
	"github.com/cuzk-dev/cuzk/toolchain"
)

func TestDefaultPins(t *testing.T) {
	p, err := toolchain.Load(nil)
	require.NoError(t, err)
	assert.Equal(t, "cuda_11.8.r11.8/compiler.31833905_0", p.CUDA.NvccBuild)
	assert.Equal(t, "11.8.89~11.8.0-5~deb12u1", p.CUDA.DebianVersion)
	assert.Equal(t, []string{"sm_80", "sm_86", "sm_89", "sm_90"}, p.Archs)
	assert.Equal(t, []string{"compute_90"}, p.PTX)
	assert.Regexp(t, `^localhost/cuzk-build:[0-9a-f]{12}@sha256:[0-9a-f]{64}$`, p.Images.Build, "cuzk's own build image, by digest")
	assert.Equal(t, "gcc-11", p.CUDA.HostCompiler)
	assert.Contains(t, p.Images.Runtime, "@sha256:79e5b2cf878ee9006f5b3738caeea34fdc7708a32db53fe3e80db0b48bd286a0")
	assert.Equal(t, []string{
		"-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_86,code=sm_86",
		"-gencode", "arch=compute_89,code=sm_89", "-gencode", "arch=compute_90,code=sm_90",
		"-gencode", "arch=compute_90,code=compute_90"}, p.Gencode())
	names := []string{}
	for _, d := range p.BasePackages {
		names = append(names, d.Name)
		assert.Len(t, d.SHA256, 64, d.Name)
	}
	assert.Equal(t, []string{"libc6", "libgcc-s1", "ca-certificates", "tzdata", "netbase"}, names)
}

func TestPinVariables(t *testing.T) {
	vars := toolchain.PinVariables()
	assert.Subset(t, vars, []string{"CUZK_ARCHS", "CUZK_PTX", "CUZK_CUDA_NVCC", "CUZK_REMOTE_CACHE", "CUZK_REMOTE_CACHE_UPLOAD"})
	assert.NotContains(t, vars, "CUZK_CACHE", "a variable of toolchain/cas, no pin")
	assert.Equal(t, "CUZK_CUDA_NVCC", toolchain.PinVariable("cuda.nvcc"))
	assert.Panics(t, func() { toolchain.PinVariable("arch") })
	for _, name := range vars {
		_, theirs := environ.Lookup(name)
		assert.False(t, theirs, "%s is a pin and a registered variable", name)
	}
}

func TestBadBasePackageIsNamed(t *testing.T) {
	f := filepath.Join(t.TempDir(), "pins.yaml")
	require.NoError(t, os.WriteFile(f, []byte("base_packages:\n  - {name: libc6, version: \"1\", arch: amd64, sha256: abc}\n"), 0o644))
	_, err := toolchain.Load([]string{"CUZK_PINS=" + f})
	assert.ErrorContains(t, err, "pin base_packages[0]")
}

// Variables another package declares, as toolchain's loader meets them.
var (
	_ = environ.Register("CUZK_PINSTEST_OTHER", "a variable some other package reads")
	_ = environ.RegisterPrefix("CUZK_PINSTEST_FAMILY_", "a family some other package reads")
)

func TestEnvironmentOverrides(t *testing.T) {
	p, err := toolchain.Load([]string{"CUZK_ARCHS=sm_90", "CUZK_PTX=", "CUZK_CUDA_NVCC=/opt/nvcc", "CUZK_CACHE=/x",
		"CUZK_PINSTEST_OTHER=1", "CUZK_PINSTEST_FAMILY_KEY=2", "PATH=/bin"})
	require.NoError(t, err)
	assert.Equal(t, []string{"sm_90"}, p.Archs)
	assert.Empty(t, p.PTX)
	assert.Equal(t, "/opt/nvcc", p.CUDA.Nvcc)
	p, err = toolchain.Load([]string{"CUZK_ARCHS=sm_80, sm_90a", "CUZK_FLAGS=-O3,-lineinfo"})
	require.NoError(t, err)
	assert.Equal(t, []string{"sm_80", "sm_90a"}, p.Archs)
	assert.Equal(t, []string{"-O3", "-lineinfo"}, p.Flags)
	assert.Contains(t, p.Gencode(), "arch=compute_90a,code=sm_90a")
}

func TestOverrideFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("archs: [sm_89]\ncuda:\n  nvcc: /usr/local/cuda/bin/nvcc\n"), 0o644))
	p, err := toolchain.Load([]string{"CUZK_PINS=" + good})
	require.NoError(t, err)
	assert.Equal(t, []string{"sm_89"}, p.Archs)
	assert.Equal(t, "/usr/local/cuda/bin/nvcc", p.CUDA.Nvcc)
	assert.Equal(t, "11.8", p.CUDA.Release, "keys the file leaves out keep their defaults")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("cuda:\n  nvcc_bulid: x\n"), 0o644))
	_, err = toolchain.Load([]string{"CUZK_PINS=" + bad})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown key "cuda.nvcc_bulid"`)

	_, err = toolchain.Load([]string{"CUZK_PINS=" + filepath.Join(dir, "missing.yaml")})
	assert.ErrorContains(t, err, "missing.yaml")
}

func TestBadPinsAreNamed(t *testing.T) {
	cases := []struct {
		env  string
		want string
	}{
		{"CUZK_ARCHS=sm90", `pin archs: "sm90" is not an SASS target`},
		{"CUZK_ARCHS=compute_90", `pin archs: "compute_90" is not an SASS target`},
		{"CUZK_PTX=sm_90", `pin ptx: "sm_90" is not a PTX target`},
		{"CUZK_IMAGES_BUILD=nvidia/cuda:11.8.0-devel-ubuntu22.04", "pin images.build: "},
		{"CUZK_IMAGES_RUNTIME=nvidia/cuda@sha256:abc", "pin images.runtime: "},
		{"CUZK_FLAGS=-O3,-gencode", `pin flags: "-gencode" is set by the kernel engine`},
		{"CUZK_FLAGS=-Ifoo", `pin flags: "-Ifoo" is set by the kernel engine`},
		{"CUZK_DEFINES=1BAD", `pin defines: "1BAD"`},
		{"CUZK_GO=go1.26", `pin go: "go1.26"`},
		{"CUZK_CUDA_NVCC_BUILD=", "pin cuda.nvcc_build: must be set"},
		{"CUZK_ARCH=sm_90", "unknown variable CUZK_ARCH"},
		{"CUZK_PINSTEST_OTHERS=1", "unknown variable CUZK_PINSTEST_OTHERS ("},
		{"CUZK_PINSTEST_FAMILY_=1", "unknown variable CUZK_PINSTEST_FAMILY_ ("},
	}
	for _, tc := range cases {
		t.Run(tc.env, func(t *testing.T) {
			_, err := toolchain.Load([]string{tc.env})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := toolchain.Load([]string{"CUZK_ARCHS=", "CUZK_PTX="})
	assert.ErrorContains(t, err, "no GPU targets")
}

func TestIdentity(t *testing.T) {
	id := toolchain.Identity{NvccBuild: "b", NvccRelease: "r", HostCompiler: "gcc 12"}
	withImage := id
	withImage.Image = "img@sha256:00"
	assert.NotEqual(t, id.Hash(), withImage.Hash())
	assert.Len(t, id.Hash(), 64)
	assert.True(t, strings.HasPrefix(withImage.String(), "nvcc-build b;"))
}
