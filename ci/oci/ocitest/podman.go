package ocitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/cuzk-dev/cuzk/ci/oci"
)

// Binary is the podman command.
var Binary = "podman"

// Available reports whether podman is installed and answers `podman version`;
// the error says why not.
func Available(ctx context.Context) error {
	if _, err := exec.LookPath(Binary); err != nil {
		return fmt.Errorf("podman not installed: %w", err)
	}
	if out, err := exec.CommandContext(ctx, Binary, "version", "--format", "{{.Client.Version}}").CombinedOutput(); err != nil {
		return fmt.Errorf("podman version: %w: %s", err, out)
	}
	return nil
}

// Load loads the image of the OCI layout in dir into podman's storage as
// tag (e.g. "localhost/cuzk-test:v1"): ggcr writes it as a docker archive,
// which `podman load` reads (podman's oci: transport derives an image name
// from the directory path, which fails on paths with capitals). Remove it
// with Remove.
func Load(ctx context.Context, dir, tag string) error {
	c, err := oci.Verify(dir)
	if err != nil {
		return fmt.Errorf("podman load: %w", err)
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("podman load: tag %q: %w", tag, err)
	}
	tmp, err := os.MkdirTemp("", "cuzk-podman-load-")
	if err != nil {
		return fmt.Errorf("podman load: %w", err)
	}
	defer os.RemoveAll(tmp) // only the archive lives here
	archive := filepath.Join(tmp, "image.tar")
	if err := tarball.WriteToFile(archive, ref, c.Image); err != nil {
		return fmt.Errorf("podman load: write archive: %w", err)
	}
	if out, err := exec.CommandContext(ctx, Binary, "load", "-q", "-i", archive).CombinedOutput(); err != nil {
		return fmt.Errorf("podman load %s: %w: %s", tag, err, out)
	}
	return nil
}

// Remove deletes tag from podman's storage.
func Remove(ctx context.Context, tag string) error {
	if out, err := exec.CommandContext(ctx, Binary, "rmi", "-f", tag).CombinedOutput(); err != nil {
		return fmt.Errorf("podman rmi %s: %w: %s", tag, err, out)
	}
	return nil
}

// Volume mounts a host path into the container.
type Volume struct {
	Host, Container string
	ReadOnly        bool
}

// Spec describes one container.
type Spec struct {
	// Image is an image in podman's storage (see Load).
	Image string
	// Args follow the image's entrypoint.
	Args []string
	// Entrypoint, when set, replaces the image's.
	Entrypoint string
	// Env adds NAME=VALUE variables.
	Env []string
	// Volumes are bind mounts.
	Volumes []Volume
	// Ports are container TCP ports published on 127.0.0.1 (random host
	// ports; see Container.Addr). Publishing turns the network on.
	Ports []int
	// Writable gives the container a writable root filesystem (default
	// read-only; /tmp and /run are tmpfs either way).
	Writable bool
	// User, when set, overrides the image's user.
	User string
}

// args returns the podman arguments up to and including the image.
func (s Spec) args(detach bool) []string {
	a := []string{"run", "--runtime", "runc", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
		"--cap-drop", "all", "--security-opt", "no-new-privileges", "--pull", "never"}
	if detach {
		a = append(a, "-d") // kept once it exits, until Stop removes it: Wait has its status whenever it asks
	} else {
		a = append(a, "--rm")
	}
	if !s.Writable {
		a = append(a, "--read-only")
	}
	if len(s.Ports) == 0 {
		a = append(a, "--network", "none")
	}
	for _, p := range s.Ports {
		a = append(a, "-p", "127.0.0.1::"+strconv.Itoa(p))
	}
	if s.User != "" {
		a = append(a, "--user", s.User)
	}
	if s.Entrypoint != "" {
		a = append(a, "--entrypoint", s.Entrypoint)
	}
	for _, e := range s.Env {
		a = append(a, "-e", e)
	}
	for _, v := range s.Volumes {
		opt := v.Host + ":" + v.Container
		if v.ReadOnly {
			opt += ":ro"
		}
		a = append(a, "-v", opt)
	}
	return append(append(a, s.Image), s.Args...)
}

// Result is what a foreground container did.
type Result struct {
	Stdout, Stderr []byte
	// ExitCode is the container process's exit status.
	ExitCode int
}

// Run runs spec in the foreground and returns its output and exit code. A
// non-zero exit of the container is not an error; failing to run it is
// (podman's own failures exit 125-127 and are reported with its stderr).
func Run(ctx context.Context, spec Spec) (Result, error) {
	cmd := exec.CommandContext(ctx, Binary, spec.args(false)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return r, nil
	case errors.As(err, &exit) && exit.ExitCode() < 125:
		r.ExitCode = exit.ExitCode()
		return r, nil
	default:
		return r, fmt.Errorf("podman run %s: %w: %s", spec.Image, err, bytes.TrimSpace(stderr.Bytes()))
	}
}

// Container is a background container started by Start.
type Container struct {
	ID    string
	ports map[int]string
}

// Start runs spec in the background and returns once podman has started
// it, with its published ports resolved. The container remains, running or
// exited, until Stop removes it: call Stop when done.
func Start(ctx context.Context, spec Spec) (*Container, error) {
	out, err := exec.CommandContext(ctx, Binary, spec.args(true)...).Output()
	if err != nil {
		return nil, fmt.Errorf("podman start %s: %w", spec.Image, stderrOf(err))
	}
	c := &Container{ID: strings.TrimSpace(string(out)), ports: map[int]string{}}
	for _, p := range spec.Ports {
		b, err := exec.CommandContext(ctx, Binary, "port", c.ID, strconv.Itoa(p)+"/tcp").Output()
		if err != nil {
			_ = c.Stop(context.WithoutCancel(ctx)) // the port error is the one to report
			return nil, fmt.Errorf("podman port %s %d: %w", c.ID, p, stderrOf(err))
		}
		c.ports[p] = strings.TrimSpace(strings.SplitN(string(b), "\n", 2)[0])
	}
	return c, nil
}

// Addr returns the 127.0.0.1 host address the container port is published on.
func (c *Container) Addr(port int) string { return c.ports[port] }

// Logs returns the container's output so far (stdout and stderr).
func (c *Container) Logs(ctx context.Context) ([]byte, error) {
	out, err := exec.CommandContext(ctx, Binary, "logs", c.ID).CombinedOutput()
	if err != nil {
		return out, fmt.Errorf("podman logs %s: %w", c.ID, err)
	}
	return out, nil
}

// Wait waits for the container to exit and returns its exit code, also
// when it exited before the call (until Stop).
func (c *Container) Wait(ctx context.Context) (int, error) {
	out, err := exec.CommandContext(ctx, Binary, "wait", c.ID).Output()
	if err != nil {
		return 0, fmt.Errorf("podman wait %s: %w", c.ID, stderrOf(err))
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}

// Stop stops the container (SIGTERM, then SIGKILL after 10 s) and returns
// once it is removed, so that its image can be removed right after. (A
// plain `podman stop` would leave it, and an image removal then fails on
// the container it still names.)
func (c *Container) Stop(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, Binary, "rm", "--force", "--ignore", "--volumes", "--time", "10", c.ID).CombinedOutput()
	if err != nil {
		return fmt.Errorf("podman rm %s: %w: %s", c.ID, err, out)
	}
	return nil
}

func stderrOf(err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) && len(exit.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, bytes.TrimSpace(exit.Stderr))
	}
	return err
}

// ProbePackage is the command BuildProbe builds.
const ProbePackage = "github.com/cuzk-dev/cuzk/ci/oci/ocitest/probe"

// BuildProbe builds the probe command statically (CGO_ENABLED=0, so it
// runs in any image) into dir and returns its path; mount it with
// Volume{Host: filepath.Dir(path), Container: "/probe", ReadOnly: true} and
// set Entrypoint "/probe/probe".
func BuildProbe(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "probe")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ProbePackage)
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build probe: %w\n%s", err, b)
	}
	return out, nil
}
