package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
)

// File is one regular file placed in a layer or archive.
type File struct {
	// Path is slash-separated; a leading "/" is dropped ("/usr/local/bin/x"
	// and "usr/local/bin/x" are the same entry). ".." is rejected.
	Path string
	// Mode holds the permission bits (0o755 for executables, 0o644 otherwise).
	Mode fs.FileMode
	Data []byte
}

// Layer is a gzip-compressed tar and the digests that name it.
type Layer struct {
	// Blob is the tar+gzip bytes.
	Blob []byte
	// Digest is "sha256:<hex>" of Blob.
	Digest string
	// DiffID is "sha256:<hex>" of the uncompressed tar.
	DiffID string
}

// dirMode is the mode of every directory entry written by TarGz.
const dirMode = 0o755

// TarGz writes files into a deterministic tar+gzip: parent directories are
// added, entries are sorted by name, owner is 0:0 with empty names, every
// mtime is mtime (truncated to seconds), the tar format is USTAR, and the
// gzip header carries no name or time. Equal inputs give equal bytes for a
// given Go release (compress/flate's output is only stable within one, which
// is why the Go version is pinned).
func TarGz(files []File, mtime time.Time) (Layer, error) {
	entries, err := tarEntries(files)
	if err != nil {
		return Layer{}, err
	}
	var tarBuf bytes.Buffer
	tw := tar.NewWriter(&tarBuf)
	mt := time.Unix(mtime.Unix(), 0).UTC()
	for _, e := range entries {
		if err := writeEntry(tw, e, mt); err != nil {
			return Layer{}, err
		}
	}
	if err := tw.Close(); err != nil {
		return Layer{}, fmt.Errorf("close tar: %w", err)
	}
	var gzBuf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gzBuf, gzip.BestCompression)
	if err != nil {
		return Layer{}, fmt.Errorf("gzip writer: %w", err)
	}
	if _, err := io.Copy(zw, bytes.NewReader(tarBuf.Bytes())); err != nil {
		return Layer{}, fmt.Errorf("gzip tar: %w", err)
	}
	if err := zw.Close(); err != nil {
		return Layer{}, fmt.Errorf("close gzip: %w", err)
	}
	return Layer{Blob: gzBuf.Bytes(), Digest: Digest(gzBuf.Bytes()), DiffID: Digest(tarBuf.Bytes())}, nil
}

// entry is a tar entry: a directory when file is nil.
type entry struct {
	name string
	file *File
}

// tarEntries validates paths, adds parent directories and sorts by name.
func tarEntries(files []File) ([]entry, error) {
	seen := map[string]bool{}
	var out []entry
	for i := range files {
		f := &files[i]
		name, err := cleanPath(f.Path)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("tar entry %q: listed twice", f.Path)
		}
		if f.Mode&^fs.ModePerm != 0 {
			return nil, fmt.Errorf("tar entry %q: mode %v is not plain permission bits", f.Path, f.Mode)
		}
		seen[name] = true
		out = append(out, entry{name: name, file: f})
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			if seen[dir+"/"] {
				break
			}
			seen[dir+"/"] = true
			out = append(out, entry{name: dir + "/"})
		}
	}
	for _, e := range out {
		if e.file != nil && seen[e.name+"/"] {
			return nil, fmt.Errorf("tar entry %q: is both a file and a directory", e.name)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func cleanPath(p string) (string, error) {
	name := strings.TrimPrefix(p, "/")
	if name == "" || strings.HasSuffix(name, "/") || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
		return "", fmt.Errorf("tar entry %q: want a clean file path without \"..\"", p)
	}
	return name, nil
}

func writeEntry(tw *tar.Writer, e entry, mtime time.Time) error {
	h := &tar.Header{Name: e.name, ModTime: mtime, Format: tar.FormatUSTAR}
	if e.file == nil {
		h.Typeflag, h.Mode = tar.TypeDir, dirMode
	} else {
		h.Typeflag, h.Mode, h.Size = tar.TypeReg, int64(e.file.Mode.Perm()), int64(len(e.file.Data))
	}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("tar header %s: %w", e.name, err)
	}
	if e.file != nil {
		if _, err := tw.Write(e.file.Data); err != nil {
			return fmt.Errorf("tar data %s: %w", e.name, err)
		}
	}
	return nil
}

// Digest returns "sha256:<hex>" of b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
