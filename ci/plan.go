package ci

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/cuzk-dev/cuzk/ci/buildimage"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/ci/release"
)

// Plan is one pipeline as plain, inspectable data.
type Plan struct {
	// Name identifies the pipeline ("kernels", "test", "release").
	Name string
	// Image is the base image, pinned by digest.
	Image string
	// Platform is the container platform, e.g. "linux/amd64".
	Platform string
	// Go is the Go toolchain the image holds at GoRoot (its first step
	// checks the version).
	Go GoToolchain
	// Source is the host directory mounted at Workdir.
	Source Source
	// Workdir is where the source is mounted and steps run.
	Workdir string
	// Env holds the container's environment, sorted by name.
	Env []EnvVar
	// Caches are persistent cache volumes.
	Caches []Cache
	// Steps run in order; each sees the previous one's filesystem.
	Steps []Step
	// Mounts are further host directories mounted read-only.
	Mounts []Mount
	// Exports copy container paths back to the host after the last step.
	Exports []Export
	// Out, when set, is an empty directory (absolute) the steps write their
	// reports into (KernelsReport): it comes back to the host after the
	// steps, whichever executor ran them, and the host reads the files
	// there. Nothing is learnt from what a step prints.
	Out string
	// NoASLR lets steps turn address randomization off for their children
	// (personality(2) with ADDR_NO_RANDOMIZE, which kbuild needs for
	// reproducible ptxas output and which default seccomp filters refuse):
	// podman and docker run with seccomp unconfined, Dagger's execs with
	// its insecure root capabilities.
	NoASLR bool
	// Push, when set, is the registry reference the exported image layout
	// (dist/image) is pushed to from the host, by go-containerregistry:
	// the image is the one the steps built, byte for byte.
	Push string
}

// Mount is a host directory mounted at Path (absolute) in the container.
type Mount struct{ Host, Path string }

// GoRoot is where the Go toolchain lies in the build image.
const GoRoot = buildimage.GoRoot

// Source is a host directory and what to leave out of it.
type Source struct {
	Host    string
	Exclude []string
}

// EnvVar is one environment variable.
type EnvVar struct{ Name, Value string }

// Cache is a host directory, Host, that the steps see at Path. Use says
// how its content travels; every executor keeps to it, so a cache means the
// same thing whichever ran the steps.
type Cache struct {
	Key, Path, Host string
	Use             CacheUse
	// Unread are patterns (Dagger's, relative to Host) of files no step
	// reads: an executor that copies the directory in (Dagger) leaves them
	// out; one that binds it (podman, docker) shows them, unread. Only a
	// ReadOnly cache may have them: a Shared one comes back whole.
	Unread []string
}

// CacheUse says how a cache's content travels between host and steps.
type CacheUse int

const (
	// Shared: the host directory's content goes in and what the steps add
	// comes back (the kernel cache: native and container builds share its
	// keys). podman and docker bind it; Dagger imports it, so its content
	// is one of the steps' inputs, and exports the steps' additions back.
	Shared CacheUse = iota
	// ReadOnly: the host directory's content goes in and nothing comes
	// back (the Go module cache, which the host fills first: the steps
	// build offline from it). podman and docker bind it read-only; Dagger
	// imports it.
	ReadOnly
	// Scratch: it only saves time and never changes a result (Go's build
	// cache, whose own keys hold every input). podman and docker bind the
	// host directory; Dagger keeps an engine cache volume named Key (not an
	// input of the steps, so the engine still serves unchanged steps from
	// its cache).
	Scratch
)

// String names u for plan dumps.
func (u CacheUse) String() string {
	switch u {
	case Shared:
		return "shared"
	case ReadOnly:
		return "read-only"
	case Scratch:
		return "scratch"
	}
	return fmt.Sprintf("CacheUse(%d)", int(u))
}

// Step is one command, run without a shell unless Args says so.
type Step struct {
	// Why says what the step is for (shown in logs and plan dumps).
	Why  string
	Args []string
}

// Export copies Path (relative to Workdir, or absolute) from the final
// container to Host. Dir says whether Path is a directory; Wipe, that the
// host directory is emptied first so that it holds exactly the export
// (Dagger's Wipe), else the export is merged into it.
type Export struct {
	Path, Host string
	Dir, Wipe  bool
}

// Validate reports every problem that keeps p from running.
func (p Plan) Validate() error {
	var errs []error
	if _, err := oci.ParseReference(p.Image); err != nil {
		errs = append(errs, fmt.Errorf("plan %s: %w", p.Name, err))
	}
	if err := p.Go.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("plan %s: %w", p.Name, err))
	}
	if !path.IsAbs(p.Workdir) {
		errs = append(errs, fmt.Errorf("plan %s: workdir %q is not absolute", p.Name, p.Workdir))
	}
	if p.Source.Host == "" {
		errs = append(errs, fmt.Errorf("plan %s: no source directory", p.Name))
	}
	if len(p.Steps) == 0 {
		errs = append(errs, fmt.Errorf("plan %s: no steps", p.Name))
	}
	if !sort.SliceIsSorted(p.Env, func(i, j int) bool { return p.Env[i].Name < p.Env[j].Name }) {
		errs = append(errs, fmt.Errorf("plan %s: env not sorted", p.Name))
	}
	for _, c := range p.Caches {
		if c.Key == "" || !path.IsAbs(c.Path) || c.Host == "" {
			errs = append(errs, fmt.Errorf("plan %s: cache %q at %q from %q: want a key, an absolute path and a host directory", p.Name, c.Key, c.Path, c.Host))
		}
		if len(c.Unread) > 0 && c.Use != ReadOnly {
			errs = append(errs, fmt.Errorf("plan %s: cache %q is %s: only a read-only cache may leave files out", p.Name, c.Key, c.Use))
		}
	}
	if p.Out != "" && !path.IsAbs(p.Out) {
		errs = append(errs, fmt.Errorf("plan %s: out directory %q is not absolute", p.Name, p.Out))
	}
	for _, m := range p.Mounts {
		if m.Host == "" || !path.IsAbs(m.Path) {
			errs = append(errs, fmt.Errorf("plan %s: mount %q at %q: want a host directory and an absolute path", p.Name, m.Host, m.Path))
		}
	}
	return errors.Join(errs...)
}

// LookupEnv returns the value of the variable name in p.Env.
func (p Plan) LookupEnv(name string) (string, bool) {
	for _, e := range p.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// String renders p for people: one line per image, mount, variable, step
// and export, in the order the pipeline applies them.
func (p Plan) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pipeline %s\n  from %s (%s)\n", p.Name, p.Image, p.Platform)
	fmt.Fprintf(&b, "  go%s in the image at %s (%s sha256 %s)\n", p.Go.Version, GoRoot, p.Go.Module(), p.Go.ZipSHA256)
	fmt.Fprintf(&b, "  mount %s at %s (excluding %s)\n", p.Source.Host, p.Workdir, strings.Join(p.Source.Exclude, " "))
	for _, m := range p.Mounts {
		fmt.Fprintf(&b, "  mount %s at %s (read-only)\n", m.Host, m.Path)
	}
	for _, c := range p.Caches {
		fmt.Fprintf(&b, "  cache %s at %s (host %s, %s)\n", c.Key, c.Path, c.Host, c.Use)
		if len(c.Unread) > 0 {
			fmt.Fprintf(&b, "    unread, left out where it is copied: %s\n", strings.Join(c.Unread, " "))
		}
	}
	for _, e := range p.Env {
		fmt.Fprintf(&b, "  env %s=%s\n", e.Name, e.Value)
	}
	for _, s := range p.Steps {
		fmt.Fprintf(&b, "  exec %s    # %s\n", strings.Join(s.Args, " "), s.Why)
	}
	if p.NoASLR {
		fmt.Fprintf(&b, "  seccomp allows personality(2): nvcc runs with address randomization off\n")
	}
	for _, x := range p.Exports {
		fmt.Fprintf(&b, "  export %s -> %s\n", x.Path, x.Host)
	}
	if p.Out != "" {
		fmt.Fprintf(&b, "  reports %s -> the host\n", p.Out)
	}
	if p.Push != "" {
		fmt.Fprintf(&b, "  push dist/%s -> %s (from the host)\n", release.ImageDir, p.Push)
	}
	return b.String()
}
