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

	envmap "github.com/cuzk-dev/cuzk/internal/environ"
)

// Mode says where kernels are built.
type Mode string

// Build modes, chosen with CUZK_TOOLCHAIN.
const (
	Auto      Mode = "auto"      // native if it matches, else container, else install natively on Debian 12
	Native    Mode = "native"    // the pinned nvcc on this machine
	Container Mode = "container" // inside cuzk's build image, through an Executor
)

// Executor is what runs a pipeline inside the build image.
type Executor string

// Executors, in the order auto mode tries them.
const (
	Dagger Executor = "dagger"
	Podman Executor = "podman"
	Docker Executor = "docker"
)

// Executors lists every executor in preference order.
var Executors = []Executor{Dagger, Podman, Docker}

// ErrNoToolchain reports that no way to build kernels was found.
var ErrNoToolchain = errors.New("toolchain: no way to build kernels")

// ErrNoExecutor reports that no container executor answers.
var ErrNoExecutor = errors.New("toolchain: no container executor (no Dagger engine, podman or docker answers)")

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

// ParseExecutor reads CUZK_EXECUTOR's value ("" means the first that answers).
func ParseExecutor(s string) (Executor, error) {
	e := Executor(strings.TrimSpace(s))
	if e == "" {
		return "", nil
	}
	for _, k := range Executors {
		if e == k {
			return e, nil
		}
	}
	return "", fmt.Errorf("%s=%q: want dagger, podman or docker", EnvExecutor, s)
}

// Choice is the toolchain a build will use.
type Choice struct {
	Mode     Mode     // Native or Container
	Local    Local    // the native toolchain, when Mode is Native and not Cached
	Executor Executor // what runs the container, when Mode is Container
	// Cached: natively, from the caches alone: every kernel is a hit, so no
	// nvcc is needed (Host.Cached said so).
	Cached bool
}

// String says what was chosen, for the line a build prints.
func (c Choice) String() string {
	switch {
	case c.Mode == Container:
		return fmt.Sprintf("container (%s, cuzk's build image)", c.Executor)
	case c.Cached:
		return "native, from the caches (every kernel a hit; no nvcc needed)"
	}
	return fmt.Sprintf("native (%s; %s)", c.Local.Nvcc, c.Local.Identity)
}

// Host is what Ensure needs to know about the machine; fields are funcs so
// tests can describe any machine.
type Host struct {
	Detect func(ctx context.Context) (Local, error)
	// Ready reports whether executor e answers here.
	Ready func(ctx context.Context, e Executor) bool
	// Forced is CUZK_EXECUTOR's choice, or "".
	Forced Executor
	// Debian12 reports whether the host is Debian 12, where the pinned
	// packages install natively.
	Debian12      func() bool
	InstallNative func(ctx context.Context) error
	// Cached, when set, reports whether every kernel is already in a
	// cache (local or remote), so that a build needs no nvcc at all.
	Cached func(ctx context.Context) bool
}

// SystemHost describes this machine.
func SystemHost(p Pins, environ []string, w io.Writer) (Host, error) {
	forced, err := ParseExecutor(envmap.Map(environ)[EnvExecutor])
	if err != nil {
		return Host{}, err
	}
	return Host{
		Detect: func(ctx context.Context) (Local, error) { return Detect(ctx, p, environ) },
		Ready:  func(ctx context.Context, e Executor) bool { return ExecutorReady(ctx, e, environ) },
		Forced: forced,
		Debian12: func() bool {
			b, err := os.ReadFile(OSRelease)
			return err == nil && IsDebian12(string(b))
		},
		InstallNative: func(ctx context.Context) error { return Install(ctx, p, w) },
	}, nil
}

// ChooseExecutor returns the forced executor if it answers, else the first
// of Executors that does.
func ChooseExecutor(ctx context.Context, h Host) (Executor, error) {
	if h.Forced != "" {
		if !h.Ready(ctx, h.Forced) {
			return "", fmt.Errorf("%w: %s=%s does not answer", ErrNoExecutor, EnvExecutor, h.Forced)
		}
		return h.Forced, nil
	}
	for _, e := range Executors {
		if h.Ready(ctx, e) {
			return e, nil
		}
	}
	return "", ErrNoExecutor
}

// Ensure picks the toolchain for mode, in this order for Auto: a native nvcc
// that is the pinned build; the caches alone, when every kernel is in one
// (Host.Cached); a container executor (Dagger, podman, docker: the first
// that answers, or CUZK_EXECUTOR's); on Debian 12, the pinned package
// installed natively; otherwise ErrNoToolchain naming the ways out. Native
// takes the pinned nvcc or the caches alone; Container, an executor.
func Ensure(ctx context.Context, p Pins, mode Mode, h Host) (Choice, error) {
	local, derr := h.Detect(ctx)
	nativeOK := derr == nil && len(Mismatch(p, local)) == 0
	cached := func() bool { return h.Cached != nil && h.Cached(ctx) }
	switch mode {
	case Native:
		if !nativeOK && cached() {
			return Choice{Mode: Native, Cached: true}, nil
		}
		if derr != nil {
			return Choice{}, fmt.Errorf("native toolchain: %w (run `go run mage.go toolchain:install`)", derr)
		}
		if d := Mismatch(p, local); len(d) > 0 {
			return Choice{}, fmt.Errorf("native toolchain is not the pinned one:\n  %s\n(run `go run mage.go toolchain:install`)", strings.Join(d, "\n  "))
		}
		return Choice{Mode: Native, Local: local}, nil
	case Container:
		e, err := ChooseExecutor(ctx, h)
		if err != nil {
			return Choice{}, fmt.Errorf("%s=container: %w (install podman or docker, or start a Dagger engine)", EnvToolchain, err)
		}
		return Choice{Mode: Container, Executor: e}, nil
	}
	if nativeOK {
		return Choice{Mode: Native, Local: local}, nil
	}
	if cached() {
		return Choice{Mode: Native, Cached: true}, nil
	}
	if e, err := ChooseExecutor(ctx, h); err == nil {
		return Choice{Mode: Container, Executor: e}, nil
	}
	if h.Debian12() {
		if err := h.InstallNative(ctx); err != nil {
			return Choice{}, err
		}
		h.Cached = nil // known: some kernel is in no cache
		return Ensure(ctx, p, Native, h)
	}
	why := "no nvcc"
	if derr == nil {
		why = strings.Join(Mismatch(p, local), "; ")
	}
	return Choice{}, fmt.Errorf("%w: %s; no container executor; not Debian 12. Ways out: install podman or docker (builds run in cuzk's build image); or install CUDA %s (nvcc build %s) and put nvcc on PATH or set CUZK_CUDA_NVCC",
		ErrNoToolchain, why, p.CUDA.Release, p.CUDA.NvccBuild)
}

// EnvDaggerRunnerHost names the Dagger engine the SDK dials (for an engine
// started by the CI's engine.sh, unix://<its socket>).
const EnvDaggerRunnerHost = "_EXPERIMENTAL_DAGGER_RUNNER_HOST"

// ExecutorReady reports whether e answers: for Dagger a `dagger run`
// session, an engine named by _EXPERIMENTAL_DAGGER_RUNNER_HOST (a unix
// socket must exist), or the
// dagger CLI with docker or podman answering (it starts its engine there);
// for podman and docker, `info` succeeding within 10 s.
func ExecutorReady(ctx context.Context, e Executor, environ []string) bool {
	env := envmap.Map(environ)
	switch e {
	case Dagger:
		if env["DAGGER_SESSION_PORT"] != "" {
			return true
		}
		if host := env[EnvDaggerRunnerHost]; host != "" {
			// An engine started by engine.sh listens on a unix socket: a
			// socket that is gone means a stopped engine, not one to dial.
			if sock, ok := strings.CutPrefix(host, "unix://"); ok {
				fi, err := os.Stat(sock)
				return err == nil && fi.Mode()&os.ModeSocket != 0
			}
			return true
		}
		if _, err := exec.LookPath("dagger"); err != nil {
			return false
		}
		return ExecutorReady(ctx, Docker, environ) || ExecutorReady(ctx, Podman, environ)
	case Podman, Docker:
		if _, err := exec.LookPath(string(e)); err != nil {
			return false
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return exec.CommandContext(ctx, string(e), "info").Run() == nil
	}
	return false
}
