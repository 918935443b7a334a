package debian

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/cuzk-dev/cuzk/ci/oci"
)

// NonrootUID is the uid and gid the image runs as (distroless's "nonroot").
const NonrootUID = 65532

// caDir holds the certificates ca-certificates ships; CABundle is where
// update-ca-certificates would concatenate them.
const (
	caDir    = "usr/share/ca-certificates/"
	CABundle = "/etc/ssl/certs/ca-certificates.crt"
)

// KeyDir is the daemon's key directory in the image: created in the base
// layer owned by nonroot, so that the volume a runtime mounts there (the
// image declares it) starts writable by the daemon.
const KeyDir = "/var/lib/cuzk/keys"

// Rootfs returns the base layer's entries: the data of every .deb at paths
// (read and unpacked in order), then what their maintainer scripts would
// have made and a minimal runtime needs: the CA bundle (every shipped .crt
// in name order, as update-ca-certificates concatenates them), /etc/passwd
// and /etc/group with root and nonroot (65532), nonroot's home, a sticky
// world-writable /tmp, /etc/nsswitch.conf, and the daemon's KeyDir owned
// by nonroot. Documentation is left out
// (usr/share/doc except each package's copyright, man, info, lintian), as
// distroless does.
func Rootfs(paths []string) ([]oci.Entry, error) {
	var out []oci.Entry
	for _, p := range paths {
		deb, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("debian rootfs: %w", err)
		}
		entries, err := DataEntries(deb)
		if err != nil {
			return nil, fmt.Errorf("debian rootfs %s: %w", p, err)
		}
		for _, e := range entries {
			if !isDoc(e.Path) {
				out = append(out, e)
			}
		}
	}
	return append(out, generated(out)...), nil
}

func isDoc(p string) bool {
	if strings.HasPrefix(p, "/usr/share/doc/") && path.Base(p) == "copyright" {
		return false // licences stay with what they cover
	}
	for _, d := range []string{"/usr/share/doc", "/usr/share/man", "/usr/share/info", "/usr/share/lintian"} {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// generated returns the files maintainer scripts would create.
func generated(entries []oci.Entry) []oci.Entry {
	var certs []oci.Entry
	for _, e := range entries {
		if e.Kind == oci.KindFile && strings.HasPrefix(strings.TrimPrefix(e.Path, "/"), caDir) && strings.HasSuffix(e.Path, ".crt") {
			certs = append(certs, e)
		}
	}
	sort.Slice(certs, func(i, j int) bool { return certs[i].Path < certs[j].Path })
	var bundle bytes.Buffer
	for _, c := range certs {
		bundle.Write(c.Data)
		if !bytes.HasSuffix(c.Data, []byte("\n")) {
			bundle.WriteByte('\n')
		}
	}
	id := fmt.Sprint(NonrootUID)
	file := func(p, s string) oci.Entry {
		return oci.Entry{Path: p, Kind: oci.KindFile, Mode: 0o644, Data: []byte(s)}
	}
	out := []oci.Entry{
		file("/etc/passwd", "root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:"+id+":"+id+":nonroot:/home/nonroot:/sbin/nologin\n"),
		file("/etc/group", "root:x:0:\nnogroup:x:65534:\nnonroot:x:"+id+":\n"),
		file("/etc/nsswitch.conf", "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\nprotocols: files\nservices: files\n"),
		{Path: "/root", Kind: oci.KindDir, Mode: 0o700},
		{Path: "/home/nonroot", Kind: oci.KindDir, Mode: 0o700, UID: NonrootUID, GID: NonrootUID},
		{Path: "/tmp", Kind: oci.KindDir, Mode: 0o777 | fs.ModeSticky},
		{Path: path.Dir(KeyDir), Kind: oci.KindDir, Mode: 0o755},
		{Path: KeyDir, Kind: oci.KindDir, Mode: 0o750, UID: NonrootUID, GID: NonrootUID},
	}
	if len(certs) > 0 {
		out = append(out, oci.Entry{Path: CABundle, Kind: oci.KindFile, Mode: 0o644, Data: bundle.Bytes()})
	}
	return out
}
