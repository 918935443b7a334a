package release

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// checkBlobs checks every blob an OCI layout's index reaches (image
// manifests, their configs and layers) against its descriptor's digest and
// size before anything decompresses it, so that damage is reported by blob
// ("image/blobs/sha256/ab12… (layer 2 of 2)") rather than as a bare gzip
// or JSON error further down. It only reads dir.
func checkBlobs(dir string) error {
	rel := func(p string) string { return path.Join(ImageDir, p) }
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		return fmt.Errorf("verify %s: %w", rel("index.json"), err)
	}
	idx, err := v1.ParseIndexManifest(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("verify %s: %w", rel("index.json"), err)
	}
	for i, md := range idx.Manifests {
		role := fmt.Sprintf("manifest %d of index.json", i+1)
		b, err := readBlob(dir, md, role)
		if err != nil {
			return err
		}
		if !md.MediaType.IsImage() {
			continue
		}
		m, err := v1.ParseManifest(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("verify %s (%s): %w", rel(blobPath(md.Digest)), role, err)
		}
		if _, err := readBlob(dir, m.Config, "config of "+md.Digest.String()); err != nil {
			return err
		}
		for j, l := range m.Layers {
			if _, err := readBlob(dir, l, fmt.Sprintf("layer %d of %d of %s", j+1, len(m.Layers), md.Digest)); err != nil {
				return err
			}
		}
	}
	return nil
}

// blobPath is a descriptor's blob path inside an OCI layout.
func blobPath(h v1.Hash) string { return path.Join("blobs", h.Algorithm, h.Hex) }

// readBlob reads the blob d names and checks its size and sha256.
func readBlob(dir string, d v1.Descriptor, role string) ([]byte, error) {
	name := path.Join(ImageDir, blobPath(d.Digest))
	if d.Digest.Algorithm != "sha256" {
		return nil, fmt.Errorf("verify %s (%s): digest algorithm %q, want sha256", name, role, d.Digest.Algorithm)
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(blobPath(d.Digest))))
	if err != nil {
		return nil, fmt.Errorf("verify %s (%s): %w", name, role, err)
	}
	if got := sha256Hex(b); got != d.Digest.Hex {
		return nil, fmt.Errorf("verify %s (%s): damaged: its sha256 is %s", name, role, got)
	}
	if int64(len(b)) != d.Size {
		return nil, fmt.Errorf("verify %s (%s): %d bytes, the descriptor says %d", name, role, len(b), d.Size)
	}
	return b, nil
}
