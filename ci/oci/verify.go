package oci

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Checked is what Verify read from a layout, for callers that go on to
// inspect it.
type Checked struct {
	Index    Index
	Manifest Manifest
	Config   Config
}

// Verify checks an image layout in dir: the oci-layout version, that
// index.json lists exactly one image manifest, and that the manifest, the
// config and every layer exist with the digest and size their descriptors
// give, and that each layer's uncompressed digest equals the config's
// diff_id. It only reads dir.
func Verify(dir string) (Checked, error) {
	var lay layoutFile
	if err := readJSON(filepath.Join(dir, "oci-layout"), &lay); err != nil {
		return Checked{}, err
	}
	if lay.ImageLayoutVersion != LayoutVersion {
		return Checked{}, fmt.Errorf("verify layout %s: imageLayoutVersion %q, want %q", dir, lay.ImageLayoutVersion, LayoutVersion)
	}
	var c Checked
	if err := readJSON(filepath.Join(dir, "index.json"), &c.Index); err != nil {
		return Checked{}, err
	}
	if len(c.Index.Manifests) != 1 || c.Index.Manifests[0].MediaType != MediaTypeManifest {
		return Checked{}, fmt.Errorf("verify layout %s: index lists %d manifests, want one %s", dir, len(c.Index.Manifests), MediaTypeManifest)
	}
	if err := readBlobJSON(dir, c.Index.Manifests[0], &c.Manifest); err != nil {
		return Checked{}, err
	}
	if err := readBlobJSON(dir, c.Manifest.Config, &c.Config); err != nil {
		return Checked{}, err
	}
	if len(c.Manifest.Layers) != len(c.Config.RootFS.DiffIDs) {
		return Checked{}, fmt.Errorf("verify layout %s: %d layers but %d diff_ids", dir, len(c.Manifest.Layers), len(c.Config.RootFS.DiffIDs))
	}
	for i, l := range c.Manifest.Layers {
		blob, err := readBlob(dir, l)
		if err != nil {
			return Checked{}, err
		}
		diff, err := gunzipDigest(blob)
		if err != nil {
			return Checked{}, fmt.Errorf("verify layer %s: %w", l.Digest, err)
		}
		if diff != c.Config.RootFS.DiffIDs[i] {
			return Checked{}, fmt.Errorf("verify layer %s: uncompressed digest %s, config diff_id %s", l.Digest, diff, c.Config.RootFS.DiffIDs[i])
		}
	}
	return c, nil
}

// ReadBlob returns the blob a descriptor names after checking its digest and
// size.
func ReadBlob(dir string, d Descriptor) ([]byte, error) { return readBlob(dir, d) }

func readBlob(dir string, d Descriptor) ([]byte, error) {
	hexDigest, ok := strings.CutPrefix(d.Digest, "sha256:")
	if !ok || !digestRE.MatchString(d.Digest) {
		return nil, fmt.Errorf("read blob: bad digest %q", d.Digest)
	}
	b, err := os.ReadFile(filepath.Join(dir, "blobs", "sha256", hexDigest))
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", d.Digest, err)
	}
	if got := Digest(b); got != d.Digest {
		return nil, fmt.Errorf("read blob %s: content digest is %s", d.Digest, got)
	}
	if int64(len(b)) != d.Size {
		return nil, fmt.Errorf("read blob %s: size %d, descriptor says %d", d.Digest, len(b), d.Size)
	}
	return b, nil
}

func readBlobJSON(dir string, d Descriptor, v any) error {
	b, err := readBlob(dir, d)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode blob %s (%s): %w", d.Digest, d.MediaType, err)
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("verify layout: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("verify layout: decode %s: %w", path, err)
	}
	return nil
}

func gunzipDigest(blob []byte) (string, error) {
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return "", err
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return "", err
	}
	return Digest(raw), nil
}
