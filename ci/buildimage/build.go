package buildimage

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sync/errgroup"

	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/internal/renameio"
)

var timeNow = time.Now

// Repository is the name the image is known by locally; the tag is the
// first 12 digits of its Key.
const Repository = "localhost/cuzk-build"

// format versions the way an image is made from a lock (with DpkgExcludes,
// which Key also hashes); a change here rebuilds every cached image.
const format = "cuzk-build-image/2"

// GoToolchain is the pinned Go toolchain's module zip on the host.
type GoToolchain struct {
	// Module is module@version ("golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64").
	Module string
	// Zip is the module zip's path, already checked against its pin.
	Zip string
	// ZipSHA256 is the zip's pinned sha256 (hex).
	ZipSHA256 string
}

// Options say what to build and where.
type Options struct {
	Lock Lock
	Go   GoToolchain
	// DebDir caches the .deb files (debian.DefaultCacheDir).
	DebDir string
	// CacheDir holds built images, one layout per Key.
	CacheDir string
	// Jobs is how many .debs download at once; default 4.
	Jobs int
	// Logger receives progress; default discards.
	Logger *slog.Logger
}

// Key names an image by everything that goes into it: the format, the dpkg
// excludes, the lock and the Go toolchain. Equal keys give equal images.
func Key(l Lock, g GoToolchain) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\nlock %s\ngo %s %s\n", format, l.ID(), g.Module, g.ZipSHA256)
	for _, x := range DpkgExcludes {
		fmt.Fprintf(h, "dpkg %s\n", x)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Result is a built (or cached) image.
type Result struct {
	// Layout is the OCI image layout's directory.
	Layout string
	// Ref is Repository:<key12>@<manifest digest>, what toolchain.yaml pins.
	Ref string
	// Digest is the manifest's digest, Config the config's (podman's image ID).
	Digest, Config v1.Hash
	// Compressed and Uncompressed are the layers' total sizes in bytes.
	Compressed, Uncompressed int64
	// Cached says the layout came from the cache, nothing was built.
	Cached bool
}

// record is what a cache entry keeps beside its layout.
type record struct {
	Digest, Config           string
	Compressed, Uncompressed int64
}

// DefaultCacheDir is ~/.cache/cuzk-build-image.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("build image cache dir: %w", err)
	}
	return filepath.Join(d, "cuzk-build-image"), nil
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Cached returns the image for o from the cache, or ok false when there is
// none or the entry is damaged (a damaged entry is removed).
func Cached(o Options) (Result, bool) {
	key := Key(o.Lock, o.Go)
	dir := filepath.Join(o.CacheDir, key)
	if _, err := os.Stat(dir); err != nil {
		return Result{}, false
	}
	r, err := readEntry(dir, key)
	if err == nil {
		return r, true
	}
	o.logger().Warn("build image cache entry damaged: removed", "dir", dir, "err", err)
	os.RemoveAll(dir) // a miss either way; the rebuild reports its own errors
	return Result{}, false
}

// readEntry checks a cache entry cheaply: the record, the index's one
// manifest and its config (hashed), and every layer blob's size.
func readEntry(dir, key string) (Result, error) {
	b, err := os.ReadFile(filepath.Join(dir, "record.json"))
	if err != nil {
		return Result{}, err
	}
	var rec record
	if err := json.Unmarshal(b, &rec); err != nil {
		return Result{}, fmt.Errorf("record: %w", err)
	}
	layout := filepath.Join(dir, "layout")
	digest, err := v1.NewHash(rec.Digest)
	if err != nil {
		return Result{}, fmt.Errorf("record: %w", err)
	}
	m, err := readBlob(layout, digest)
	if err != nil {
		return Result{}, err
	}
	mf, err := v1.ParseManifest(strings.NewReader(string(m)))
	if err != nil {
		return Result{}, fmt.Errorf("manifest: %w", err)
	}
	if _, err := readBlob(layout, mf.Config.Digest); err != nil {
		return Result{}, err
	}
	for _, l := range mf.Layers {
		st, err := os.Stat(blobPath(layout, l.Digest))
		if err != nil {
			return Result{}, fmt.Errorf("layer %s: %w", l.Digest, errors.Join(err, errDamaged))
		}
		if st.Size() != l.Size {
			return Result{}, fmt.Errorf("layer %s: %d bytes, manifest says %d: %w", l.Digest, st.Size(), l.Size, errDamaged)
		}
	}
	cfg, _ := v1.NewHash(rec.Config)
	return Result{Layout: layout, Ref: ref(key, digest), Digest: digest, Config: cfg,
		Compressed: rec.Compressed, Uncompressed: rec.Uncompressed, Cached: true}, nil
}

var errDamaged = errors.New("damaged")

func blobPath(layout string, h v1.Hash) string {
	return filepath.Join(layout, "blobs", h.Algorithm, h.Hex)
}

func readBlob(layout string, h v1.Hash) ([]byte, error) {
	b, err := os.ReadFile(blobPath(layout, h))
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", h, errors.Join(err, errDamaged))
	}
	if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != h.Hex {
		return nil, fmt.Errorf("blob %s: content hashes to %x: %w", h, got, errDamaged)
	}
	return b, nil
}

func ref(key string, digest v1.Hash) string {
	return Repository + ":" + key[:12] + "@" + digest.String()
}

// Build returns the image for o: from the cache when its Key is there,
// else built (see the package doc) and added to the cache.
func Build(ctx context.Context, o Options) (Result, error) {
	if err := o.Lock.Validate(); err != nil {
		return Result{}, fmt.Errorf("build image: %w", err)
	}
	if o.Go.Zip == "" || o.Go.Module == "" {
		return Result{}, errors.New("build image: no Go toolchain zip")
	}
	if r, ok := Cached(o); ok {
		o.logger().Info("build image cached", "ref", r.Ref)
		return r, nil
	}
	log := o.logger()
	key := Key(o.Lock, o.Go)
	if err := os.MkdirAll(o.CacheDir, 0o755); err != nil {
		return Result{}, fmt.Errorf("build image: %w", err)
	}
	work, err := os.MkdirTemp(o.CacheDir, ".build-")
	if err != nil {
		return Result{}, fmt.Errorf("build image: %w", err)
	}
	defer os.RemoveAll(work) // scratch: repository links, blobs, the unfinished layout

	start := timeNow()
	paths, err := Fetch(ctx, o.Lock, o.DebDir, o.Jobs, log)
	if err != nil {
		return Result{}, err
	}
	log.Info("debs ready", "packages", len(paths), "duration", timeNow().Sub(start))
	repo := filepath.Join(work, "repo")
	if err := localRepo(ctx, repo, paths); err != nil {
		return Result{}, fmt.Errorf("build image: %w", err)
	}
	installed := filepath.Join(work, "installed.txt")
	args, err := mmdebstrapArgs(o.Lock, repo, installed)
	if err != nil {
		return Result{}, err
	}
	epoch := time.Unix(o.Lock.Epoch, 0).UTC()
	var rootSize int64
	root, err := writeLayer(filepath.Join(work, "root.tar.gz"), epoch, func(w io.Writer) error {
		cw := &countWriter{w: w}
		err := mmdebstrap(ctx, args, o.Lock.Epoch, cw, log)
		rootSize = cw.n
		return err
	})
	if err != nil {
		return Result{}, fmt.Errorf("build image: %w", err)
	}
	list, err := os.ReadFile(installed)
	if err != nil {
		return Result{}, fmt.Errorf("build image: %w", err)
	}
	if err := checkInstalled(o.Lock, list); err != nil {
		return Result{}, fmt.Errorf("build image: %w", err)
	}
	var goSize int64
	goLayer, err := writeLayer(filepath.Join(work, "go.tar.gz"), epoch, func(w io.Writer) error {
		cw := &countWriter{w: w}
		err := goToolchainTar(o.Go.Zip, o.Go.Module, epoch, cw)
		goSize = cw.n
		return err
	})
	if err != nil {
		return Result{}, fmt.Errorf("build image: %w", err)
	}
	if _, err := writeEntry(o, root, goLayer, rootSize, goSize, filepath.Join(work, "entry"), key, epoch); err != nil {
		return Result{}, fmt.Errorf("build image: %w", err)
	}
	final := filepath.Join(o.CacheDir, key)
	if err := os.Rename(filepath.Join(work, "entry"), final); err != nil {
		// Another process built the same key meanwhile: equal keys give
		// equal images, so its entry serves (and is checked like any hit).
		if r, ok := Cached(o); ok {
			return r, nil
		}
		return Result{}, fmt.Errorf("build image: %w", err)
	}
	if err := renameio.SyncDir(o.CacheDir); err != nil {
		return Result{}, fmt.Errorf("build image: %w", err)
	}
	r, err := readEntry(final, key)
	r.Cached = false
	log.Info("build image built", "ref", r.Ref, "duration", timeNow().Sub(start))
	return r, err
}

// writeEntry assembles the image around the two layers and writes it as a
// cache entry at dir: the OCI layout and its record.
func writeEntry(o Options, root, goLayer blobLayer, rootSize, goSize int64, dir, key string, epoch time.Time) (Result, error) {
	img, err := oci.Build(imageSpec(o, root, goLayer, key, epoch))
	if err != nil {
		return Result{}, err
	}
	desc, err := oci.WriteLayout(filepath.Join(dir, "layout"), img, v1.Platform{OS: "linux", Architecture: o.Lock.Architecture}, Repository+":"+key[:12])
	if err != nil {
		return Result{}, err
	}
	cfg, err := img.ConfigName()
	if err != nil {
		return Result{}, err
	}
	rec := record{Digest: desc.Digest.String(), Config: cfg.String(), Compressed: root.size + goLayer.size, Uncompressed: rootSize + goSize}
	b, err := json.Marshal(rec)
	if err != nil {
		return Result{}, err
	}
	if err := renameio.WriteFile(filepath.Join(dir, "record.json"), b, 0o644); err != nil {
		return Result{}, err
	}
	r, err := readEntry(dir, key)
	r.Cached = false
	return r, err
}

// imageSpec is the image around the two layers: Go first on PATH, bash as
// the command, labels naming the lock.
func imageSpec(o Options, root, goLayer blobLayer, key string, epoch time.Time) oci.Image {
	return oci.Image{
		Layers: []oci.LayerSpec{
			{Layer: root, CreatedBy: "mmdebstrap --variant=apt --include=" + strings.Join(o.Lock.Include, ","),
				Comment: fmt.Sprintf("Debian %s, %d packages pinned by %s (lock %s)", o.Lock.Suite, len(o.Lock.Packages), LockFile, o.Lock.ID().Short())},
			{Layer: goLayer, CreatedBy: "unzip " + o.Go.Module + " to " + GoRoot, Comment: "module zip sha256 " + o.Go.ZipSHA256},
		},
		Cmd: []string{"/bin/bash"},
		Env: []string{"PATH=" + GoRoot + "/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
			"GOTOOLCHAIN=local", "LANG=C.UTF-8"},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "cuzk build image",
			"org.opencontainers.image.description": "Debian " + o.Lock.Suite + " with the pinned CUDA toolkit, host compilers and Go",
			"dev.cuzk.build-image.key":             key,
			"dev.cuzk.build-image.lock":            o.Lock.ID().String(),
		},
		Created: epoch, OS: "linux", Architecture: o.Lock.Architecture,
	}
}

// Fetch returns the verified .deb of every locked package, downloading into
// dir what is missing there (jobs at a time) from the lock's mirrors.
func Fetch(ctx context.Context, l Lock, dir string, jobs int, log *slog.Logger) ([]string, error) {
	if jobs < 1 {
		jobs = 4
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := debian.Fetcher{Dir: dir, Logger: log, Mirrors: l.Mirrors,
		Download: func(ctx context.Context, d string, p debian.Package) error {
			return debian.HTTPDownload(ctx, http.DefaultClient, l.Mirrors, d, p)
		}}
	paths := make([]string, len(l.Packages))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(jobs)
	for i, p := range l.Packages {
		g.Go(func() error {
			got, err := f.Fetch(gctx, []debian.Package{p})
			if err != nil {
				return err
			}
			paths[i] = got[0]
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("fetch debs: %w", err)
	}
	sort.Strings(paths)
	return paths, nil
}

// Tag is the image's local name, Repository:<key12>, as loaded into podman
// or docker.
func (r Result) Tag() string {
	name, _, _ := strings.Cut(r.Ref, "@")
	return name
}

// Archive returns an OCI archive (a tar of the layout) beside r's layout,
// written once per cache entry: what `podman load`, `docker load` and
// Dagger's Container.Import read.
func Archive(r Result) (string, error) {
	path := filepath.Join(filepath.Dir(r.Layout), "image.tar")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	err := renameio.WriteFrom(path, 0o644, func(w io.Writer) error { return tarDir(r.Layout, w) })
	if err != nil {
		return "", fmt.Errorf("build image archive: %w", err)
	}
	return path, nil
}

// tarDir writes the regular files and directories under dir as a tar with
// paths relative to dir, in name order.
func tarDir(dir string, w io.Writer) error {
	tw := tar.NewWriter(w)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		h, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		h.Name = filepath.ToSlash(rel)
		h.Uid, h.Gid, h.Uname, h.Gname = 0, 0, "", ""
		if d.IsDir() {
			h.Name += "/"
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close() // read-only
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	return tw.Close()
}
