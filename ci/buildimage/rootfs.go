package buildimage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/cuzk-dev/cuzk/internal/shquote"
)

// DpkgExcludes are left out of every package as it is unpacked (dpkg's
// path-exclude and path-include, applied in order). First what Debian's
// container base images leave out: documentation (the copyright files
// stay), manuals, info pages, translations. Then the CUDA math libraries and
// the static archives the toolkit package pulls in (cuBLAS, cuFFT, cuSPARSE,
// cuSOLVER, cuRAND, NPP, nvJPEG: 4.9 of the root's 5.9 GB): the image
// compiles device-only fatbins, and nvcc -fatbin links nothing. The packages
// are still installed and recorded by dpkg, so the closure is the native
// one; their files are just absent (`dpkg --verify` lists them as missing).
var DpkgExcludes = []string{
	"path-exclude=/usr/share/doc/*",
	"path-include=/usr/share/doc/*/copyright",
	"path-exclude=/usr/share/man/*",
	"path-exclude=/usr/share/info/*",
	"path-exclude=/usr/share/locale/*",
	"path-include=/usr/share/locale/locale.alias",
	"path-exclude=/usr/share/lintian/*",
	"path-exclude=/usr/lib/x86_64-linux-gnu/libcublas*",
	"path-exclude=/usr/lib/x86_64-linux-gnu/libcufft*",
	"path-exclude=/usr/lib/x86_64-linux-gnu/libcusparse*",
	"path-exclude=/usr/lib/x86_64-linux-gnu/libcusolver*",
	"path-exclude=/usr/lib/x86_64-linux-gnu/libcurand*",
	"path-exclude=/usr/lib/x86_64-linux-gnu/libnpp*",
	"path-exclude=/usr/lib/x86_64-linux-gnu/libnvjpeg*",
	"path-exclude=/usr/lib/x86_64-linux-gnu/libnvblas*",
	"path-exclude=/usr/lib/x86_64-linux-gnu/*_static.a",
	"path-include=/usr/lib/x86_64-linux-gnu/libcudart_static.a",
}

// localRepo makes dir a flat apt repository of exactly the .debs at paths
// (symbolic links, so nothing is copied) with a Packages index from
// dpkg-scanpackages.
func localRepo(ctx context.Context, dir string, paths []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if err := os.Symlink(abs, filepath.Join(dir, filepath.Base(p))); err != nil {
			return fmt.Errorf("local repository: %w", err)
		}
	}
	cmd := exec.CommandContext(ctx, "dpkg-scanpackages", "--multiversion", ".", "/dev/null")
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("local repository: dpkg-scanpackages: %w\n%s", err, errb.Bytes())
	}
	return os.WriteFile(filepath.Join(dir, "Packages"), out.Bytes(), 0o644)
}

// mmdebstrapArgs returns the mmdebstrap command line that lays the lock's
// root down from the flat repository repo and writes its tar to standard
// output. installed is where a hook records what dpkg installed.
func mmdebstrapArgs(l Lock, repo, installed string) ([]string, error) {
	mode := "root"
	if os.Geteuid() != 0 {
		mode = "unshare"
	}
	sources, err := l.Spec().sourcesList("")
	if err != nil {
		return nil, err
	}
	args := []string{"--variant=apt", "--mode=" + mode, "--architectures=" + l.Architecture,
		"--include=" + strings.Join(l.Include, ","),
		"--aptopt=APT::Install-Recommends \"false\"",
		"--aptopt=Acquire::Languages \"none\""}
	for _, x := range DpkgExcludes {
		args = append(args, "--dpkgopt="+x)
	}
	args = append(args,
		// The image's apt reads Debian's archive, not the build's repository.
		`--customize-hook=rm -f "$1"/etc/apt/sources.list.d/*; printf '%s' '`+sources+`' > "$1/etc/apt/sources.list"`,
		`--customize-hook=chroot "$1" dpkg-query -W -f '${Package}\t${Version}\t${Architecture}\n' > `+shquote.Quote(installed),
		l.Suite, "-", "deb [trusted=yes] copy://"+repo+" ./")
	return args, nil
}

// mmdebstrap runs mmdebstrap with args under SOURCE_DATE_EPOCH, streaming
// the root's tar to w; its progress goes to log.
func mmdebstrap(ctx context.Context, args []string, epoch int64, w io.Writer, log *slog.Logger) error {
	cmd := exec.CommandContext(ctx, "mmdebstrap", args...)
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+strconv.FormatInt(epoch, 10), "LC_ALL=C")
	cmd.Stdout = w
	var tail tailBuffer
	cmd.Stderr = &tail
	start := timeNow()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("mmdebstrap: %w\n%s", err, tail.String())
	}
	log.Info("root laid down", "tool", "mmdebstrap", "duration", timeNow().Sub(start))
	return nil
}

// checkInstalled compares dpkg's list of installed packages (name, version,
// architecture, tab separated) with the lock: the root must hold exactly the
// closure.
func checkInstalled(l Lock, list []byte) error {
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return fmt.Errorf("installed packages: bad line %q", line)
		}
		got[f[0]] = f[1]
	}
	var diff []string
	for _, p := range l.Packages {
		v, ok := got[p.Name]
		switch {
		case !ok:
			diff = append(diff, "locked but not installed: "+p.Name+"="+p.Version)
		case v != p.Version:
			diff = append(diff, fmt.Sprintf("%s: locked %s, installed %s", p.Name, p.Version, v))
		}
		delete(got, p.Name)
	}
	for n, v := range got {
		diff = append(diff, "installed but not locked: "+n+"="+v)
	}
	if len(diff) > 0 {
		sort.Strings(diff)
		return errors.New("the root differs from the lock (run `go run mage.go image:lock`):\n  " + strings.Join(diff, "\n  "))
	}
	return nil
}

// tailBuffer keeps the last 8 KiB written to it (a tool's error output).
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 8<<10 {
		t.b = t.b[len(t.b)-8<<10:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string { return string(t.b) }
