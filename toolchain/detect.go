package toolchain

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	envmap "github.com/cuzk-dev/cuzk/internal/environ"
)

// ErrNoNvcc reports that the pinned nvcc binary is not installed.
var ErrNoNvcc = errors.New("toolchain: nvcc not found")

// Local is the toolchain found on this machine.
type Local struct {
	// Nvcc is the absolute path of the nvcc binary.
	Nvcc string
	// Container is the image this toolchain runs in (CUZK_IMAGE), or "".
	Container string
	Identity
}

// Detect finds the nvcc named by the pins and reads its identity. It runs
// `nvcc --version`, and `nvcc -dryrun` to learn which host compiler nvcc
// puts first on its PATH (Debian wraps gcc-11 there, for example). The image
// comes from CUZK_IMAGE, which the pinned build container sets.
func Detect(ctx context.Context, p Pins, environ []string) (Local, error) {
	path, err := exec.LookPath(p.CUDA.Nvcc)
	if err != nil {
		return Local{}, fmt.Errorf("%w: %q (%v)", ErrNoNvcc, p.CUDA.Nvcc, err)
	}
	out, err := run(ctx, path, "--version")
	if err != nil {
		return Local{}, fmt.Errorf("detect nvcc: %w", err)
	}
	l := Local{Nvcc: path}
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if b, ok := strings.CutPrefix(line, "Build "); ok {
			l.NvccBuild = b
		}
		if strings.HasPrefix(line, "Cuda compilation tools, ") {
			l.NvccRelease = strings.TrimPrefix(line, "Cuda compilation tools, ")
		}
	}
	if l.NvccBuild == "" {
		return Local{}, fmt.Errorf("detect nvcc %s: no \"Build\" line in --version output:\n%s", path, out)
	}
	host, err := hostCompiler(ctx, path, p.CUDA.HostCompiler)
	if err != nil {
		return Local{}, err
	}
	l.HostCompiler = host
	l.Container = envmap.Map(environ)[EnvImage]
	l.Identity = KeyIdentity(p, l)
	return l, nil
}

// KeyIdentity is the identity kernel keys hold for l: what compiles, not
// where it runs. Inside a container whose nvcc build and release lines and
// host compiler line equal the pins (cuzk's own build image: the same Debian
// packages as a native install) it is the native pinned identity, so native
// and container builds share keys, caches and bytes. Any other container
// keeps its image reference in the key.
func KeyIdentity(p Pins, l Local) Identity {
	id := l.Identity
	id.Image = ""
	if l.Container != "" && id != PinnedIdentity(p, "") {
		id.Image = l.Container
	}
	return id
}

// hostCompiler resolves the host compiler on nvcc's own PATH and returns the
// first line of its --version.
func hostCompiler(ctx context.Context, nvcc, name string) (string, error) {
	// -ccbin as every compile passes it: without it even a dry run asks the
	// caller's gcc for its version.
	dry, err := run(ctx, nvcc, "-ccbin", name, "-dryrun", "-E", "-x", "cu", os.DevNull)
	if err != nil {
		return "", fmt.Errorf("detect host compiler: %w", err)
	}
	search := os.Getenv("PATH")
	for _, line := range strings.Split(dry, "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "#$ PATH="); ok {
			search = p
		}
	}
	bin := ""
	for _, dir := range filepath.SplitList(search) {
		cand := filepath.Join(dir, name)
		if st, err := os.Stat(cand); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			bin = cand
			break
		}
	}
	if bin == "" {
		return "", fmt.Errorf("detect host compiler: %q not on nvcc's PATH %s", name, search)
	}
	out, err := run(ctx, bin, "--version")
	if err != nil {
		return "", fmt.Errorf("detect host compiler: %w", err)
	}
	first, _, _ := strings.Cut(out, "\n")
	return strings.TrimSpace(first), nil
}

// run executes a command and returns its combined output; the error carries
// the exit status and output.
func run(ctx context.Context, name string, args ...string) (string, error) {
	var buf bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return buf.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, buf.String())
	}
	return buf.String(), nil
}

// Mismatch lists the differences between the pins and a local toolchain,
// one "what: want X, have Y" line each; empty means the local toolchain is
// the pinned one.
func Mismatch(p Pins, l Local) []string {
	var diff []string
	if l.NvccBuild != p.CUDA.NvccBuild {
		diff = append(diff, fmt.Sprintf("nvcc build: want %q, have %q (%s)", p.CUDA.NvccBuild, l.NvccBuild, l.Nvcc))
	}
	if !strings.Contains(l.NvccRelease, "release "+p.CUDA.Release+",") {
		diff = append(diff, fmt.Sprintf("cuda release: want %q, have %q", p.CUDA.Release, l.NvccRelease))
	} else if l.NvccRelease != p.CUDA.NvccRelease {
		diff = append(diff, fmt.Sprintf("nvcc release: want %q, have %q", p.CUDA.NvccRelease, l.NvccRelease))
	}
	// Inside a container its image (then part of the key) pins the host compiler.
	if l.Container == "" && l.HostCompiler != p.CUDA.HostCompilerVersion {
		diff = append(diff, fmt.Sprintf("host compiler: want %q, have %q", p.CUDA.HostCompilerVersion, l.HostCompiler))
	}
	return diff
}
