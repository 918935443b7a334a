package release

import (
	"context"
	"fmt"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"os"
	"path/filepath"
	"sort"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/internal/renameio"
)

// Names of the files a release directory holds besides the archive.
const (
	// ImageDir is the OCI image layout's directory.
	ImageDir = "image"
	// SBOMSuffix and ProvenanceSuffix follow the bundle name.
	SBOMSuffix       = ".spdx.json"
	ProvenanceSuffix = ".provenance.json"
)

// Source says where a release comes from, for the SBOM and provenance.
type Source struct {
	// Commit is the source commit (40 hex); "" when unknown.
	Commit string
	// Repository is the source repository's URI.
	Repository string
	// Pins are the toolchain pins as key → value (recorded in provenance).
	Pins map[string]string
}

// Dist is a complete release directory.
type Dist struct {
	Bundle Bundle
	// Image is the OCI image manifest's descriptor.
	Image v1.Descriptor
	// Dir is the release directory; SBOM and Provenance are file paths in it.
	Dir, SBOM, Provenance string
}

// Make builds a complete, reproducible release into o.OutDir: the bundle
// (Build, with src.Commit stamped into every binary beside the version),
// the OCI image layout on base in OutDir/image (replaced), the
// SPDX SBOM and the in-toto provenance, and OutDir/SHA256SUMS over the
// archive, SBOM and provenance. Every file is written atomically; the
// image directory is rebuilt whole.
func Make(ctx context.Context, o Options, base Base, src Source) (Dist, error) {
	b, err := build(ctx, o, src.Commit)
	if err != nil {
		return Dist{}, err
	}
	b.Repository = src.Repository
	d := Dist{Bundle: b, Dir: b.Options.OutDir}
	raw := manifestBytes(b)
	if len(raw) == 0 {
		return Dist{}, fmt.Errorf("release: the bundle has no %s (add KernelManifestExtra)", KernelManifest)
	}
	man, err := manifest.Decode(raw)
	if err != nil {
		return Dist{}, fmt.Errorf("release: bundle %s: %w", KernelManifest, err)
	}
	imgDir := filepath.Join(d.Dir, ImageDir)
	if err := os.RemoveAll(imgDir); err != nil {
		return Dist{}, fmt.Errorf("release image: clear %s: %w", imgDir, err)
	}
	if d.Image, err = b.WriteImage(imgDir, base); err != nil {
		return Dist{}, err
	}
	b.Options.Logger.Info("image", "dir", imgDir, "digest", d.Image.Digest.String())
	facts := Facts{Commit: src.Commit, Repository: src.Repository, Manifest: man, Base: base.Packages, Image: d.Image, Pins: src.Pins}
	sbom, err := b.SBOM(facts)
	if err != nil {
		return Dist{}, err
	}
	prov, err := b.Provenance(facts)
	if err != nil {
		return Dist{}, err
	}
	name := b.Options.Name()
	d.SBOM, d.Provenance = filepath.Join(d.Dir, name+SBOMSuffix), filepath.Join(d.Dir, name+ProvenanceSuffix)
	archive, err := os.ReadFile(b.Archive)
	if err != nil {
		return Dist{}, fmt.Errorf("release: %w", err)
	}
	for path, data := range map[string][]byte{d.SBOM: sbom, d.Provenance: prov} {
		if err := renameio.WriteFile(path, data, 0o644); err != nil {
			return Dist{}, fmt.Errorf("release: %w", err)
		}
	}
	all := sums([]oci.File{{Path: filepath.Base(b.Archive), Data: archive},
		{Path: filepath.Base(d.SBOM), Data: sbom}, {Path: filepath.Base(d.Provenance), Data: prov}})
	if err := renameio.WriteFile(b.Sums, all, 0o644); err != nil {
		return Dist{}, fmt.Errorf("release sums: %w", err)
	}
	return d, nil
}

// Assets returns the files of a release directory to attach to a release
// page, after Verify: SHA256SUMS and every file it lists (archive, SBOM,
// provenance), sorted. The image goes to a registry instead.
func Assets(dir string) ([]string, error) {
	if _, err := Verify(dir); err != nil {
		return nil, err
	}
	listed, err := checkSums(dir)
	if err != nil {
		return nil, err
	}
	out := []string{filepath.Join(dir, SumsFile)}
	for name := range listed {
		out = append(out, filepath.Join(dir, name))
	}
	sort.Strings(out)
	return out, nil
}
