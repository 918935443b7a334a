package toolchain

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/cuzk-dev/cuzk/internal/renameio"
)

// ErrNotDebian reports a host where the native toolchain cannot be installed
// by this package (anything but Debian 12).
var ErrNotDebian = errors.New("toolchain: not a Debian 12 host")

// Debian-family host files the installer reads and edits.
const (
	OSRelease      = "/etc/os-release"
	DebianSources  = "/etc/apt/sources.list.d/debian.sources"
	AptSourcesList = "/etc/apt/sources.list"
)

// EnableNonFree returns sources with the contrib and non-free components
// added to every Debian entry, in either the deb822 format (Components:
// lines) or the one-line format (deb URI SUITE COMPONENTS...). changed is
// false when nothing needed adding.
func EnableNonFree(sources string) (out string, changed bool) {
	lines := strings.Split(sources, "\n")
	for i, l := range lines {
		var prefix string
		var comps []string
		switch {
		case strings.HasPrefix(l, "Components:"):
			prefix, comps = "Components:", strings.Fields(strings.TrimPrefix(l, "Components:"))
		case strings.HasPrefix(l, "deb ") || strings.HasPrefix(l, "deb-src "):
			f := strings.Fields(l)
			if len(f) < 4 || strings.HasPrefix(f[1], "[") {
				continue // options or malformed lines are left as they are
			}
			prefix, comps = strings.Join(f[:3], " "), f[3:]
		default:
			continue
		}
		if !contains(comps, "main") {
			continue
		}
		add := []string{}
		for _, c := range []string{"contrib", "non-free"} {
			if !contains(comps, c) {
				add = append(add, c)
			}
		}
		if len(add) > 0 {
			lines[i] = prefix + " " + strings.Join(append(comps, add...), " ")
			changed = true
		}
	}
	return strings.Join(lines, "\n"), changed
}

// IsDebian12 reports whether an os-release file describes Debian 12
// (bookworm), the only release whose packages are the pins: elsewhere
// (Ubuntu, another Debian) the pinned versions do not exist, and builds run
// in cuzk's build image instead.
func IsDebian12(osRelease string) bool {
	vals := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(osRelease))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			vals[k] = strings.Trim(v, `"'`)
		}
	}
	return vals["ID"] == "debian" && vals["VERSION_ID"] == "12"
}

// Install installs the pinned native toolchain on Debian 12:
// enable contrib/non-free, apt-get update, install the pinned package
// version. Every step is printed to w before it runs. It needs root (or
// sudo) and network access to Debian's mirrors.
func Install(ctx context.Context, p Pins, w io.Writer) error {
	rel, err := os.ReadFile(OSRelease)
	if err != nil || !IsDebian12(string(rel)) {
		return fmt.Errorf("%w: the pinned %s=%s is a Debian 12 package (read %s); elsewhere build in cuzk's build image: install podman or docker and set %s=container",
			ErrNotDebian, p.CUDA.DebianPackage, p.CUDA.DebianVersion, OSRelease, EnvToolchain)
	}
	for _, path := range []string{DebianSources, AptSourcesList} {
		if err := enableNonFreeFile(path, w); err != nil {
			return err
		}
	}
	sudo := []string{}
	if os.Geteuid() != 0 {
		sudo = []string{"sudo"}
	}
	steps := [][]string{
		append(append([]string{}, sudo...), "apt-get", "update"),
		append(append([]string{}, sudo...), "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y",
			"--no-install-recommends", p.CUDA.DebianPackage+"="+p.CUDA.DebianVersion),
	}
	for _, argv := range steps {
		fmt.Fprintf(w, "toolchain: run %s\n", strings.Join(argv, " "))
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("install toolchain: %s: %w", strings.Join(argv, " "), err)
		}
	}
	return nil
}

func enableNonFreeFile(path string, w io.Writer) error {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("install toolchain: read %s: %w", path, err)
	}
	out, changed := EnableNonFree(string(b))
	if !changed {
		fmt.Fprintf(w, "toolchain: %s already has contrib non-free\n", path)
		return nil
	}
	fmt.Fprintf(w, "toolchain: enable contrib non-free in %s\n", path)
	perm := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	if err := renameio.WriteFile(path, []byte(out), perm); err != nil {
		return fmt.Errorf("install toolchain: %w", err)
	}
	return nil
}
