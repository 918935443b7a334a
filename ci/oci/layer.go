package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
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

// Kind is what a tree entry is.
type Kind byte

// Entry kinds.
const (
	KindFile Kind = iota
	KindDir
	KindSymlink
	KindHardlink
)

// Entry is one entry of a layer: a file, directory, symbolic or hard link.
type Entry struct {
	// Path is as in File.Path.
	Path string
	Kind Kind
	// Mode holds the permission bits, plus fs.ModeSticky for a sticky
	// directory (/tmp). Set-id bits are refused.
	Mode fs.FileMode
	// UID and GID own the entry; 0 unless set.
	UID, GID int
	// Link is the target of a link (a hard link's is a clean layer path).
	Link string
	// Data is a file's content.
	Data []byte
}

// Entries turns files into file entries.
func Entries(files []File) []Entry {
	out := make([]Entry, len(files))
	for i, f := range files {
		out[i] = Entry{Path: f.Path, Kind: KindFile, Mode: f.Mode, Data: f.Data}
	}
	return out
}

// dirMode is the mode of every directory entry added as a parent.
const dirMode = 0o755

// Tar writes entries as a deterministic tar: paths cleaned, parent
// directories added (0755, root), entries sorted by name, every mtime
// mtime (truncated to seconds), no user or group names. A path listed twice
// is an error unless both are directories with the same mode and owner, or
// files with the same bytes, mode and owner.
func Tar(entries []Entry, mtime time.Time) ([]byte, error) {
	sorted, err := normalize(entries)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mt := time.Unix(mtime.Unix(), 0).UTC()
	for _, e := range sorted {
		if err := writeEntry(tw, e, mt); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, fmt.Errorf("close tar: %w", err)
	}
	return buf.Bytes(), nil
}

// normalize validates, merges duplicates, adds parents and sorts; directory
// names end in "/".
func normalize(entries []Entry) ([]Entry, error) {
	byName := map[string]Entry{}
	add := func(e Entry) error {
		if prev, ok := byName[e.Path]; ok {
			if !sameEntry(prev, e) {
				return fmt.Errorf("tar entry %q: listed twice with different content", strings.TrimSuffix(e.Path, "/"))
			}
			return nil
		}
		byName[e.Path] = e
		return nil
	}
	for _, e := range entries {
		name, err := cleanPath(e.Path)
		if err != nil {
			return nil, err
		}
		if e.Mode&^(fs.ModePerm|fs.ModeSticky) != 0 {
			return nil, fmt.Errorf("tar entry %q: mode %v is not plain permission bits", e.Path, e.Mode)
		}
		if e.Kind > KindHardlink {
			return nil, fmt.Errorf("tar entry %q: unknown kind %d", e.Path, e.Kind)
		}
		if (e.Kind == KindSymlink || e.Kind == KindHardlink) == (e.Link == "") {
			return nil, fmt.Errorf("tar entry %q: a link needs a target and only a link has one", e.Path)
		}
		e.Path = name
		if e.Kind == KindDir {
			e.Path += "/"
		}
		if err := add(e); err != nil {
			return nil, err
		}
	}
	for name := range byName {
		for dir := path.Dir(strings.TrimSuffix(name, "/")); dir != "."; dir = path.Dir(dir) {
			if _, ok := byName[dir+"/"]; ok {
				break
			}
			byName[dir+"/"] = Entry{Path: dir + "/", Kind: KindDir, Mode: dirMode}
		}
	}
	out := make([]Entry, 0, len(byName))
	for name, e := range byName {
		if e.Kind != KindDir {
			if _, ok := byName[name+"/"]; ok {
				return nil, fmt.Errorf("tar entry %q: is both a file and a directory", name)
			}
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

func sameEntry(a, b Entry) bool {
	return a.Kind == b.Kind && a.Mode == b.Mode && a.UID == b.UID && a.GID == b.GID && a.Link == b.Link && bytes.Equal(a.Data, b.Data)
}

func cleanPath(p string) (string, error) {
	name := strings.TrimPrefix(p, "/")
	if name == "" || strings.HasSuffix(name, "/") || path.Clean(name) != name || name == ".." || strings.HasPrefix(name, "../") {
		return "", fmt.Errorf("tar entry %q: want a clean path without \"..\"", p)
	}
	return name, nil
}

func writeEntry(tw *tar.Writer, e Entry, mtime time.Time) error {
	h := &tar.Header{Name: e.Path, ModTime: mtime, Mode: int64(e.Mode.Perm()), Uid: e.UID, Gid: e.GID}
	if e.Mode&fs.ModeSticky != 0 {
		h.Mode |= 0o1000
	}
	switch e.Kind {
	case KindDir:
		h.Typeflag = tar.TypeDir
	case KindSymlink:
		h.Typeflag, h.Linkname = tar.TypeSymlink, e.Link
	case KindHardlink:
		h.Typeflag, h.Linkname = tar.TypeLink, strings.TrimPrefix(e.Link, "/")
	default:
		h.Typeflag, h.Size = tar.TypeReg, int64(len(e.Data))
	}
	// The format is left to archive/tar: USTAR where it can encode the
	// header, else PAX (long or non-ASCII names); the choice depends only
	// on the header.
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("tar header %s: %w", e.Path, err)
	}
	if e.Kind == KindFile {
		if _, err := tw.Write(e.Data); err != nil {
			return fmt.Errorf("tar data %s: %w", e.Path, err)
		}
	}
	return nil
}

// gzipLevel is the compression level of every layer and archive.
const gzipLevel = gzip.BestCompression

// TarGz writes files as a deterministic tar (see Tar) compressed with
// gzip, whose header carries no name or time: the release archive.
func TarGz(files []File, mtime time.Time) ([]byte, error) {
	raw, err := Tar(Entries(files), mtime)
	if err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzipLevel)
	if err != nil {
		return nil, fmt.Errorf("gzip writer: %w", err)
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("gzip tar: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("close gzip: %w", err)
	}
	return gz.Bytes(), nil
}

// Layer returns entries as an OCI tar+gzip layer (see Tar). The tar is held
// in memory; ggcr compresses it on demand, the same bytes each time.
func Layer(entries []Entry, mtime time.Time) (v1.Layer, error) {
	raw, err := Tar(entries, mtime)
	if err != nil {
		return nil, err
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(raw)), nil },
		tarball.WithCompressionLevel(gzipLevel), tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return l, nil
}
