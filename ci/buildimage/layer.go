package buildimage

import (
	"archive/tar"
	"archive/zip"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"
)

// gzipLevel is the layers' compression level: fixed, so equal tars give
// equal blobs (klauspost/compress is deterministic for a given version and
// level, and go.mod pins the version).
const gzipLevel = 6

// blobLayer is a gzip layer blob on disk whose digests were computed while
// it was written, so go-containerregistry never reads it twice to learn them.
type blobLayer struct {
	path           string
	digest, diffID v1.Hash
	size           int64
}

var _ v1.Layer = blobLayer{}

func (l blobLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l blobLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l blobLayer) Size() (int64, error)                { return l.size, nil }
func (l blobLayer) MediaType() (types.MediaType, error) { return types.OCILayer, nil }
func (l blobLayer) Compressed() (io.ReadCloser, error)  { return os.Open(l.path) }
func (l blobLayer) Uncompressed() (io.ReadCloser, error) {
	f, err := os.Open(l.path)
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("layer %s: %w", l.path, err)
	}
	return readCloser{zr, f}, nil
}

type readCloser struct {
	io.Reader
	f *os.File
}

func (r readCloser) Close() error { return r.f.Close() }

// writeLayer compresses the tar stream that write produces into the file
// dst and returns the layer, hashing the tar (diff ID) and the blob (digest)
// on the way. The gzip header's time is mtime (klauspost/compress writes a
// constant of its own for a zero time; an explicit one is plainly ours).
func writeLayer(dst string, mtime time.Time, write func(io.Writer) error) (blobLayer, error) {
	f, err := os.Create(dst)
	if err != nil {
		return blobLayer{}, err
	}
	defer f.Close() // closed below on success; this covers the error paths
	blobHash := sha256.New()
	counter := &countWriter{w: io.MultiWriter(f, blobHash)}
	zw, err := gzip.NewWriterLevel(counter, gzipLevel)
	if err != nil {
		return blobLayer{}, err
	}
	zw.ModTime = mtime
	tarHash := sha256.New()
	if err := write(io.MultiWriter(zw, tarHash)); err != nil {
		return blobLayer{}, err
	}
	if err := zw.Close(); err != nil {
		return blobLayer{}, err
	}
	if err := f.Sync(); err != nil {
		return blobLayer{}, err
	}
	if err := f.Close(); err != nil {
		return blobLayer{}, err
	}
	return blobLayer{path: dst, size: counter.n,
		digest: v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", blobHash.Sum(nil))},
		diffID: v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", tarHash.Sum(nil))}}, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// GoRoot is where the Go toolchain lies in the image.
const GoRoot = "/usr/local/go"

// goToolchainTar writes the golang.org/toolchain module zip at zipPath as a
// tar rooted at GoRoot: entries in name order, every directory made
// explicit, mtime epoch, owner root. Module zips keep no modes, so files
// under bin/ and pkg/tool/ are 0755 (as the go command makes them when it
// unpacks a toolchain) and all others 0644.
func goToolchainTar(zipPath, prefix string, epoch time.Time, w io.Writer) error {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return fmt.Errorf("go toolchain layer: %w", err)
	}
	defer zr.Close() // read-only
	files := map[string]*zip.File{}
	dirs := map[string]bool{}
	for _, f := range zr.File {
		rel, ok := strings.CutPrefix(f.Name, prefix+"/")
		if !ok || strings.HasSuffix(rel, "/") || rel == "" {
			if !ok {
				return fmt.Errorf("go toolchain layer: zip entry %q outside %s", f.Name, prefix)
			}
			continue
		}
		if strings.Contains(rel, "..") {
			return fmt.Errorf("go toolchain layer: zip entry %q", f.Name)
		}
		files[rel] = f
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	root := strings.TrimPrefix(GoRoot, "/")
	for d := path.Dir(root); d != "."; d = path.Dir(d) {
		dirs["../"+d] = true // parents of GoRoot, written as absolute below
	}
	names := make([]string, 0, len(files)+len(dirs)+1)
	for n := range files {
		names = append(names, path.Join(root, n))
	}
	for d := range dirs {
		if strings.HasPrefix(d, "../") {
			names = append(names, strings.TrimPrefix(d, "../")+"/")
		} else {
			names = append(names, path.Join(root, d)+"/")
		}
	}
	names = append(names, root+"/")
	sort.Strings(names)
	tw := tar.NewWriter(w)
	for _, n := range names {
		h := &tar.Header{Name: n, ModTime: epoch}
		if strings.HasSuffix(n, "/") {
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
			if err := tw.WriteHeader(h); err != nil {
				return err
			}
			continue
		}
		rel := strings.TrimPrefix(n, root+"/")
		f := files[rel]
		h.Typeflag, h.Mode, h.Size = tar.TypeReg, 0o644, int64(f.UncompressedSize64)
		if strings.HasPrefix(rel, "bin/") || strings.HasPrefix(rel, "pkg/tool/") {
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("go toolchain layer: %s: %w", f.Name, err)
		}
		_, err = io.Copy(tw, rc)
		rc.Close()
		if err != nil {
			return fmt.Errorf("go toolchain layer: %s: %w", f.Name, err)
		}
	}
	return tw.Close()
}
