package toolchain_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/toolchain"
)

func TestIsDebian12(t *testing.T) {
	assert.True(t, toolchain.IsDebian12("PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n"))
	assert.False(t, toolchain.IsDebian12("ID=debian\nVERSION_ID=\"13\"\n"), "trixie lacks the pinned package versions")
	assert.False(t, toolchain.IsDebian12("ID=ubuntu\nID_LIKE=debian\nVERSION_ID=\"24.04\"\n"), "Ubuntu is Debian-family but has other versions")
	assert.False(t, toolchain.IsDebian12("ID=fedora\nID_LIKE=\"rhel centos\"\n"))
	assert.False(t, toolchain.IsDebian12(""))
}

func TestEnableNonFree(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"deb822", "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\n",
			"Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main contrib non-free\n"},
		{"one-line", "deb http://deb.debian.org/debian bookworm main\n# deb-src x y main\n",
			"deb http://deb.debian.org/debian bookworm main contrib non-free\n# deb-src x y main\n"},
		{"partly there", "Components: main non-free-firmware contrib\n", "Components: main non-free-firmware contrib non-free\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, changed := toolchain.EnableNonFree(tc.in)
			assert.True(t, changed)
			assert.Equal(t, tc.want, out)
			again, changed := toolchain.EnableNonFree(out)
			assert.False(t, changed, "idempotent")
			assert.Equal(t, out, again)
		})
	}
	_, changed := toolchain.EnableNonFree("deb [signed-by=/k.gpg] http://x y main\n")
	assert.False(t, changed, "lines with options are left alone")
}

type fakeHost struct {
	local     toolchain.Local
	detectErr error
	// ready lists the executors that answer; forced is CUZK_EXECUTOR.
	ready      []toolchain.Executor
	forced     toolchain.Executor
	debian     bool
	installed  bool
	installErr error
	// cached: every kernel is in a cache; asked counts the questions.
	cached bool
	asked  int
}

func (f *fakeHost) host() toolchain.Host {
	return toolchain.Host{
		Detect: func(context.Context) (toolchain.Local, error) {
			if f.installed {
				return pinnedLocal(), nil
			}
			return f.local, f.detectErr
		},
		Ready:    func(_ context.Context, e toolchain.Executor) bool { return slices.Contains(f.ready, e) },
		Forced:   f.forced,
		Debian12: func() bool { return f.debian },
		InstallNative: func(context.Context) error {
			f.installed = f.installErr == nil
			return f.installErr
		},
		Cached: func(context.Context) bool { f.asked++; return f.cached },
	}
}

func pinnedLocal() toolchain.Local {
	return toolchain.Local{Nvcc: "/usr/bin/nvcc", Identity: toolchain.Identity{
		NvccBuild: "cuda_11.8.r11.8/compiler.31833905_0", NvccRelease: "release 11.8, V11.8.89", HostCompiler: "gcc-11 (Debian 11.3.0-12) 11.3.0"}}
}

func TestEnsureOrder(t *testing.T) {
	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	other := pinnedLocal()
	other.NvccBuild, other.NvccRelease = "cuda_12.4.r12.4/compiler.1", "release 12.4, V12.4.131"
	otherGcc := pinnedLocal()
	otherGcc.HostCompiler = "gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0"
	noNvcc := toolchain.ErrNoNvcc
	podman := []toolchain.Executor{toolchain.Podman}
	all := toolchain.Executors
	cases := []struct {
		name      string
		mode      toolchain.Mode
		host      fakeHost
		want      toolchain.Mode
		executor  toolchain.Executor
		installed bool
		err       string
		cached    bool // want a Cached choice
	}{
		{"matching native wins", toolchain.Auto, fakeHost{local: pinnedLocal(), ready: all, debian: true}, toolchain.Native, "", false, "", false},
		{"wrong nvcc, dagger first", toolchain.Auto, fakeHost{local: other, ready: all, debian: true}, toolchain.Container, toolchain.Dagger, false, "", false},
		{"no nvcc, podman before installing", toolchain.Auto, fakeHost{detectErr: noNvcc, ready: podman, debian: true}, toolchain.Container, toolchain.Podman, false, "", false},
		{"no nvcc, docker last", toolchain.Auto, fakeHost{detectErr: noNvcc, ready: []toolchain.Executor{toolchain.Docker}}, toolchain.Container, toolchain.Docker, false, "", false},
		{"no nvcc, forced docker", toolchain.Auto, fakeHost{detectErr: noNvcc, ready: all, forced: toolchain.Docker}, toolchain.Container, toolchain.Docker, false, "", false},
		{"no nvcc, debian 12 installs", toolchain.Auto, fakeHost{detectErr: noNvcc, debian: true}, toolchain.Native, "", true, "", false},
		{"nothing", toolchain.Auto, fakeHost{detectErr: noNvcc}, "", "", false, "Ways out", false},
		{"install fails", toolchain.Auto, fakeHost{detectErr: noNvcc, debian: true, installErr: errors.New("apt down")}, "", "", false, "apt down", false},
		{"forced native, wrong nvcc", toolchain.Native, fakeHost{local: other, ready: all}, "", "", false, "nvcc build: want", false},
		{"forced native, other host compiler", toolchain.Native, fakeHost{local: otherGcc}, "", "", false, "host compiler: want", false},
		{"forced container, no executor", toolchain.Container, fakeHost{local: pinnedLocal()}, "", "", false, "no container executor", false},
		{"forced container, forced executor silent", toolchain.Container, fakeHost{ready: podman, forced: toolchain.Docker}, "", "", false, "CUZK_EXECUTOR=docker does not answer", false},
		{"forced container", toolchain.Container, fakeHost{local: pinnedLocal(), ready: podman}, toolchain.Container, toolchain.Podman, false, "", false},
		{"no nvcc, every kernel cached: no executor, no install", toolchain.Auto, fakeHost{detectErr: noNvcc, ready: all, debian: true, cached: true}, toolchain.Native, "", false, "", true},
		{"forced native, no nvcc, every kernel cached", toolchain.Native, fakeHost{detectErr: noNvcc, cached: true}, toolchain.Native, "", false, "", true},
		{"forced container although cached", toolchain.Container, fakeHost{detectErr: noNvcc, ready: podman, cached: true}, toolchain.Container, toolchain.Podman, false, "", false},
		{"matching native, cache not asked", toolchain.Auto, fakeHost{local: pinnedLocal(), cached: true}, toolchain.Native, "", false, "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.host
			c, err := toolchain.Ensure(context.Background(), pins, tc.mode, h.host())
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.Mode)
			assert.Equal(t, tc.executor, c.Executor)
			assert.Equal(t, tc.installed, h.installed)
			assert.Equal(t, tc.cached, c.Cached)
			if tc.want == toolchain.Native && tc.host.detectErr == nil {
				assert.Zero(t, h.asked, "a pinned native nvcc builds without asking the caches")
			}
		})
	}
}

func TestKeyIdentity(t *testing.T) {
	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	native := pinnedLocal()
	assert.Equal(t, toolchain.PinnedIdentity(pins, ""), toolchain.KeyIdentity(pins, native))

	inImage := pinnedLocal()
	inImage.Container = "localhost/cuzk-build:0123@sha256:" + strings.Repeat("a", 64)
	assert.Equal(t, toolchain.PinnedIdentity(pins, ""), toolchain.KeyIdentity(pins, inImage),
		"cuzk's build image with the pinned toolchain: same key as native")

	userImage := inImage
	userImage.HostCompiler = "gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0"
	id := toolchain.KeyIdentity(pins, userImage)
	assert.Equal(t, userImage.Container, id.Image, "another toolchain in a container keeps the image in the key")
	assert.NotEqual(t, toolchain.PinnedIdentity(pins, "").Hash(), id.Hash())
	assert.Empty(t, toolchain.Mismatch(pins, userImage), "inside an image its reference pins the host compiler")
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]toolchain.Mode{"": toolchain.Auto, "native": toolchain.Native, " container ": toolchain.Container} {
		m, err := toolchain.ParseMode(in)
		require.NoError(t, err)
		assert.Equal(t, want, m)
	}
	_, err := toolchain.ParseMode("docker")
	assert.ErrorContains(t, err, "CUZK_TOOLCHAIN")
}

func TestDetectRealNvcc(t *testing.T) {
	if _, err := exec.LookPath("nvcc"); err != nil {
		t.Skip("nvcc not installed (run `go run mage.go toolchain:install`)")
	}
	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	l, err := toolchain.Detect(context.Background(), pins, []string{"CUZK_IMAGE=img@sha256:" + "00"})
	require.NoError(t, err)
	assert.Empty(t, toolchain.Mismatch(pins, l), "the pinned nvcc is installed")
	assert.NotEmpty(t, l.HostCompiler)
	assert.Equal(t, "img@sha256:00", l.Container)
	assert.Equal(t, toolchain.PinnedIdentity(pins, ""), l.Identity,
		"the pinned toolchain in a container has the native identity: what compiles, not where")

	native, err := toolchain.Detect(context.Background(), pins, nil)
	require.NoError(t, err)
	assert.Equal(t, toolchain.PinnedIdentity(pins, ""), native.Identity,
		"the pins give the installed toolchain's identity, so keys need no nvcc")

	pins.CUDA.Nvcc = "definitely-not-nvcc"
	_, err = toolchain.Detect(context.Background(), pins, nil)
	assert.ErrorIs(t, err, toolchain.ErrNoNvcc)
}

func TestDaggerReadyNeedsTheEngineSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "engine.sock")
	env := []string{toolchain.EnvDaggerRunnerHost + "=unix://" + sock, "PATH=" + dir}
	assert.False(t, toolchain.ExecutorReady(context.Background(), toolchain.Dagger, env), "no socket: a stopped engine")
	l, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer l.Close()
	assert.True(t, toolchain.ExecutorReady(context.Background(), toolchain.Dagger, env))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "plain"), nil, 0o644))
	env[0] = toolchain.EnvDaggerRunnerHost + "=unix://" + filepath.Join(dir, "plain")
	assert.False(t, toolchain.ExecutorReady(context.Background(), toolchain.Dagger, env), "a file that is no socket")
}
