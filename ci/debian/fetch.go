package debian

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/cuzk-dev/cuzk/internal/renameio"
)

// Package pins one Debian package file.
type Package struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Arch is the package architecture ("amd64", or "all").
	Arch string `json:"arch"`
	// SHA256 is the hex sha256 of the .deb file.
	SHA256 string `json:"sha256"`
	// Path is the file's path in the Debian archive ("pool/main/...");
	// optional, for downloads without apt.
	Path string `json:"path,omitempty"`
}

var (
	reName   = regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`)
	reVer    = regexp.MustCompile(`^[0-9A-Za-z.+~:-]+$`)
	reSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// Validate reports what is wrong with the pin.
func (p Package) Validate() error {
	switch {
	case !reName.MatchString(p.Name):
		return fmt.Errorf("debian package %q: bad name", p.Name)
	case !reVer.MatchString(p.Version):
		return fmt.Errorf("debian package %s: bad version %q", p.Name, p.Version)
	case p.Arch == "":
		return fmt.Errorf("debian package %s: no architecture", p.Name)
	case !reSHA256.MatchString(p.SHA256):
		return fmt.Errorf("debian package %s: sha256 %q is not 64 lowercase hex", p.Name, p.SHA256)
	}
	return nil
}

// FileName is the .deb's name in a cache directory, as apt names it
// (the epoch's ":" written "%3a").
func (p Package) FileName() string {
	return fmt.Sprintf("%s_%s_%s.deb", p.Name, escapeEpoch(p.Version), p.Arch)
}

func escapeEpoch(v string) string {
	return string(bytes.ReplaceAll([]byte(v), []byte(":"), []byte("%3a")))
}

// DefaultCacheDir is where pinned .deb files are kept between builds:
// cuzk-debs under the user's cache directory (~/.cache/cuzk-debs). Every
// file there is verified on use, so deleting it is always safe.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("debian cache dir: %w", err)
	}
	return filepath.Join(d, "cuzk-debs"), nil
}

// ErrChecksum reports a .deb whose sha256 is not the pinned one.
var ErrChecksum = errors.New("debian: sha256 mismatch")

// Fetcher finds pinned .deb files.
type Fetcher struct {
	// Dir is the cache directory (created if absent).
	Dir string
	// Download fetches p into dir as p.FileName(); default: AptDownload,
	// and where that fails and p.Path is set, HTTPDownload from Mirrors.
	Download func(ctx context.Context, dir string, p Package) error
	// Mirrors are the archive roots HTTPDownload tries; default
	// DefaultMirrors.
	Mirrors []string
	// Offline refuses to download: every package must be in Dir.
	Offline bool
	// Logger receives one line per package; default discards.
	Logger *slog.Logger
}

// Fetch returns the path of each package's verified .deb in f.Dir, in the
// order of pkgs.
func (f Fetcher) Fetch(ctx context.Context, pkgs []Package) ([]string, error) {
	if f.Dir == "" {
		return nil, errors.New("debian fetch: no cache directory")
	}
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("debian fetch: %w", err)
	}
	log := f.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	paths := make([]string, len(pkgs))
	for i, p := range pkgs {
		if err := p.Validate(); err != nil {
			return nil, err
		}
		dst := filepath.Join(f.Dir, p.FileName())
		err := checkFile(dst, p)
		switch {
		case err == nil:
			log.Info("deb cached", "package", p.Name, "version", p.Version)
			paths[i] = dst
			continue
		case errors.Is(err, ErrChecksum):
			log.Warn("deb damaged: removed", "package", p.Name, "err", err)
			if err := os.Remove(dst); err != nil {
				return nil, fmt.Errorf("debian fetch %s: remove damaged %s: %w", p.Name, dst, err)
			}
		case !errors.Is(err, fs.ErrNotExist):
			return nil, err
		}
		if f.Offline {
			return nil, fmt.Errorf("debian fetch %s=%s: not in %s and downloads are off", p.Name, p.Version, f.Dir)
		}
		if err := f.download(ctx, p, dst); err != nil {
			return nil, err
		}
		log.Info("deb downloaded", "package", p.Name, "version", p.Version)
		paths[i] = dst
	}
	return paths, nil
}

// download fetches p into a scratch directory, verifies it and moves it to
// dst atomically.
func (f Fetcher) download(ctx context.Context, p Package, dst string) error {
	scratch, err := os.MkdirTemp(f.Dir, ".download-")
	if err != nil {
		return fmt.Errorf("debian fetch %s: %w", p.Name, err)
	}
	defer os.RemoveAll(scratch) // only the download lives here
	dl := f.Download
	if dl == nil {
		dl = func(ctx context.Context, dir string, p Package) error {
			aptErr := AptDownload(ctx, dir, p)
			if aptErr == nil || p.Path == "" {
				return aptErr
			}
			if err := HTTPDownload(ctx, http.DefaultClient, f.mirrors(), dir, p); err != nil {
				return errors.Join(aptErr, err)
			}
			return nil
		}
	}
	if err := dl(ctx, scratch, p); err != nil {
		return fmt.Errorf("debian fetch %s=%s: %w", p.Name, p.Version, err)
	}
	got := filepath.Join(scratch, p.FileName())
	if err := checkFile(got, p); err != nil {
		return fmt.Errorf("debian fetch %s=%s: downloaded file: %w", p.Name, p.Version, err)
	}
	// The scratch directory is inside f.Dir: a rename is atomic, and the
	// download was already synced by renameio.
	if err := os.Rename(got, dst); err != nil {
		return fmt.Errorf("debian fetch %s: %w", p.Name, err)
	}
	return renameio.SyncDir(f.Dir)
}

// AptDownload runs `apt-get download name=version` in dir.
func AptDownload(ctx context.Context, dir string, p Package) error {
	if err := os.Chmod(dir, 0o755); err != nil { // lets apt's sandbox user write here
		return err
	}
	cmd := exec.CommandContext(ctx, "apt-get", "download", "-q", p.Name+"="+p.Version)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("apt-get download: %w\n%s", err, out)
	}
	return nil
}

// DefaultMirrors are Debian's archive roots: the main archive, and the
// security archive for paths under pool/updates/.
var DefaultMirrors = []string{"https://deb.debian.org/debian", "https://deb.debian.org/debian-security"}

func (f Fetcher) mirrors() []string {
	if len(f.Mirrors) > 0 {
		return f.Mirrors
	}
	return DefaultMirrors
}

// HTTPDownload fetches p.Path from the first mirror that serves it into
// dir/p.FileName(). The caller verifies the sha256.
func HTTPDownload(ctx context.Context, client *http.Client, mirrors []string, dir string, p Package) error {
	var errs []error
	for _, m := range mirrors {
		url := strings.TrimSuffix(m, "/") + "/" + p.Path
		err := httpGet(ctx, client, url, filepath.Join(dir, p.FileName()))
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("http download %s: %w", p.Path, errors.Join(errs...))
}

func httpGet(ctx context.Context, client *http.Client, url, dst string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return renameio.WriteFrom(dst, 0o644, func(w io.Writer) error {
		n, err := io.Copy(w, io.LimitReader(resp.Body, maxDeb+1))
		if err == nil && n > maxDeb {
			err = fmt.Errorf("GET %s: larger than %d bytes", url, int64(maxDeb))
		}
		return err
	})
}

// maxDeb bounds a download: the largest pinned package (nvidia-cuda-dev) is
// 774 MB.
const maxDeb = 2 << 30

// checkFile verifies path against p's sha256.
func checkFile(path string, p Package) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("debian %s: %w", p.Name, err)
	}
	defer f.Close() // read-only
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("debian %s: %w", p.Name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != p.SHA256 {
		return fmt.Errorf("debian %s (%s): %w: file has %s, pinned %s", p.Name, path, ErrChecksum, got, p.SHA256)
	}
	return nil
}
