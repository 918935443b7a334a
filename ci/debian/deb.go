package debian

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/ulikunitz/xz"

	"github.com/cuzk-dev/cuzk/ci/oci"
)

// arMagic starts every .deb (an ar archive).
const arMagic = "!<arch>\n"

// DataEntries returns the entries of a .deb's data archive (data.tar,
// data.tar.gz or data.tar.xz): directories, files, symbolic and hard links,
// with owner 0:0. Set-id bits are dropped (nothing in the image runs as
// another user); device nodes and FIFOs are errors.
func DataEntries(deb []byte) ([]oci.Entry, error) {
	member, data, err := dataMember(deb)
	if err != nil {
		return nil, err
	}
	var r io.Reader
	switch member {
	case "data.tar":
		r = bytes.NewReader(data)
	case "data.tar.gz":
		if r, err = gzip.NewReader(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("deb %s: %w", member, err)
		}
	case "data.tar.xz":
		if r, err = xz.NewReader(bufio.NewReader(bytes.NewReader(data))); err != nil {
			return nil, fmt.Errorf("deb %s: %w", member, err)
		}
	default:
		return nil, fmt.Errorf("deb: unsupported data member %s", member)
	}
	return tarEntries(tar.NewReader(r), member)
}

// dataMember finds the data.tar* member of an ar archive.
func dataMember(deb []byte) (string, []byte, error) {
	if !bytes.HasPrefix(deb, []byte(arMagic)) {
		return "", nil, errors.New("deb: not an ar archive")
	}
	rest := deb[len(arMagic):]
	for len(rest) >= 60 {
		hdr := rest[:60]
		name := strings.TrimSuffix(strings.TrimSpace(string(hdr[:16])), "/")
		size, err := strconv.ParseInt(strings.TrimSpace(string(hdr[48:58])), 10, 64)
		if err != nil || size < 0 || int64(len(rest)-60) < size {
			return "", nil, fmt.Errorf("deb: member %q: bad size %q", name, hdr[48:58])
		}
		body := rest[60 : 60+size]
		if strings.HasPrefix(name, "data.tar") {
			return name, body, nil
		}
		rest = rest[60+size:]
		if size%2 == 1 && len(rest) > 0 {
			rest = rest[1:] // members are 2-byte aligned
		}
	}
	return "", nil, errors.New("deb: no data.tar member")
}

func tarEntries(tr *tar.Reader, member string) ([]oci.Entry, error) {
	var out []oci.Entry
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("deb %s: %w", member, err)
		}
		name := strings.TrimSuffix(path.Clean("/"+h.Name), "/")
		if name == "" {
			continue // "./": the root itself
		}
		e := oci.Entry{Path: name, Mode: fs.FileMode(h.Mode).Perm()}
		if h.Mode&0o1000 != 0 {
			e.Mode |= fs.ModeSticky
		}
		switch h.Typeflag {
		case tar.TypeDir:
			e.Kind = oci.KindDir
		case tar.TypeReg:
			e.Kind = oci.KindFile
			if e.Data, err = io.ReadAll(tr); err != nil {
				return nil, fmt.Errorf("deb %s: %s: %w", member, name, err)
			}
		case tar.TypeSymlink:
			e.Kind, e.Link = oci.KindSymlink, h.Linkname
		case tar.TypeLink:
			e.Kind, e.Link = oci.KindHardlink, path.Clean("/"+h.Linkname)
		default:
			return nil, fmt.Errorf("deb %s: %s: unsupported entry type %q", member, name, h.Typeflag)
		}
		out = append(out, e)
	}
}
