package toolchain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Mode says where kernels are built.
type Mode string

// Build modes, chosen with CUZK_TOOLCHAIN.
const (
	Auto      Mode = "auto"      // native if it matches, else container, else install natively
	Native    Mode = "native"    // the pinned nvcc on this machine
	Container Mode = "container" // inside images.build through a Dagger engine
)

// ErrNoToolchain reports that no way to build kernels was found.
var ErrNoToolchain = errors.New("toolchain: no way to build kernels")

// ParseMode reads CUZK_TOOLCHAIN's value ("" means auto).
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case "":
		return Auto, nil
	case Auto, Native, Container:
		return m, nil
	default:
		return "", fmt.Errorf("%s=%q: want native, container or auto", EnvToolchain, s)
	}
}

// Choice is the toolchain a build will use.
type Choice struct {
	Mode  Mode  // Native or Container
	Local Local // the native toolchain, when Mode is Native
}

// Host is what Ensure needs to know about the machine; fields are funcs so
// tests can describe any machine.
type Host struct {
	Detect        func(ctx context.Context) (Local, error)
	EngineReady   func(ctx context.Context) bool
	DebianFamily  func() bool
	InstallNative func(ctx context.Context) error
}

// SystemHost describes this machine.
func SystemHost(p Pins, environ []string, w io.Writer) Host {
	return Host{
		Detect:      func(ctx context.Context) (Local, error) { return Detect(ctx, p, environ) },
		EngineReady: func(ctx context.Context) bool { return EngineReachable(ctx, environ) },
		DebianFamily: func() bool {
			b, err := os.ReadFile(OSRelease)
			return err == nil && IsDebianFamily(string(b))
		},
		InstallNative: func(ctx context.Context) error { return Install(ctx, p, w) },
	}
}

// Ensure picks the toolchain for mode, in this order for Auto: a native nvcc
// that is the pinned build; a reachable Dagger engine (build inside the
// pinned image); a Debian-family host where the pinned package is installed;
// otherwise ErrNoToolchain naming the ways out.
func Ensure(ctx context.Context, p Pins, mode Mode, h Host) (Choice, error) {
	local, derr := h.Detect(ctx)
	nativeOK := derr == nil && len(Mismatch(p, local)) == 0
	switch mode {
	case Native:
		if derr != nil {
			return Choice{}, fmt.Errorf("native toolchain: %w (run `go run mage.go toolchain:install`)", derr)
		}
		if d := Mismatch(p, local); len(d) > 0 {
			return Choice{}, fmt.Errorf("native toolchain is not the pinned one:\n  %s\n(run `go run mage.go toolchain:install`)", strings.Join(d, "\n  "))
		}
		return Choice{Mode: Native, Local: local}, nil
	case Container:
		if !h.EngineReady(ctx) {
			return Choice{}, fmt.Errorf("%s=container: no Dagger engine reachable (start one, or use native)", EnvToolchain)
		}
		return Choice{Mode: Container}, nil
	}
	if nativeOK {
		return Choice{Mode: Native, Local: local}, nil
	}
	if h.EngineReady(ctx) {
		return Choice{Mode: Container}, nil
	}
	if h.DebianFamily() {
		if err := h.InstallNative(ctx); err != nil {
			return Choice{}, err
		}
		return Ensure(ctx, p, Native, h)
	}
	why := "no nvcc"
	if derr == nil {
		why = strings.Join(Mismatch(p, local), "; ")
	}
	return Choice{}, fmt.Errorf("%w: %s; no Dagger engine; not a Debian-family host. Ways out: install CUDA %s (nvcc build %s) and put nvcc on PATH or set CUZK_CUDA_NVCC; or start a Dagger engine (docker) and set %s=container",
		ErrNoToolchain, why, p.CUDA.Release, p.CUDA.NvccBuild, EnvToolchain)
}

// EngineReachable reports whether a Dagger engine can be used: inside a
// `dagger run` session, or with a container runtime that answers.
func EngineReachable(ctx context.Context, environ []string) bool {
	if envMap(environ)["DAGGER_SESSION_PORT"] != "" {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, rt := range []string{"docker", "podman"} {
		if _, err := exec.LookPath(rt); err != nil {
			continue
		}
		if exec.CommandContext(ctx, rt, "info").Run() == nil {
			return true
		}
	}
	return false
}
