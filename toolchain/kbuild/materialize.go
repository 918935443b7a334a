package kbuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"os"
	"path/filepath"
	"strings"

	"github.com/cuzk-dev/cuzk/internal/renameio"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// materialize writes each unit's fatbin and the manifest into the output
// directory, replacing only files whose bytes differ (each by an atomic
// rename) and removing fatbins of units that no longer exist. It returns how
// many files it wrote.
func (e *Engine) materialize(results []Result) (int, error) {
	dir := filepath.Join(e.root, e.layout.Out)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("kbuild: materialize: %w", err)
	}
	man := manifest.Manifest{Version: manifest.Version, Toolchain: e.tc.Identity.Hash(),
		NvccBuild: e.tc.NvccBuild, Image: e.tc.Image, Archs: append(append([]string{}, e.pins.Archs...), e.pins.PTX...), Pins: buildPins(e.pins, e.tc.Identity)}
	keep := map[string]bool{manifest.File: true, "README.md": true}
	written := 0
	for _, r := range results {
		name := r.Unit.Name + ".fatbin"
		keep[name] = true
		n, err := writeIfChanged(filepath.Join(dir, name), r.Fatbin)
		if err != nil {
			return written, err
		}
		written += n
		man.Kernels = append(man.Kernels, manifestKernel(r))
	}
	b, err := man.Encode()
	if err != nil {
		return written, err
	}
	n, err := writeIfChanged(filepath.Join(dir, manifest.File), b)
	written += n
	if err != nil {
		return written, err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return written, fmt.Errorf("kbuild: materialize: %w", err)
	}
	for _, ent := range ents {
		if strings.HasSuffix(ent.Name(), ".fatbin") && !keep[ent.Name()] {
			if err := os.Remove(filepath.Join(dir, ent.Name())); err != nil {
				return written, fmt.Errorf("kbuild: remove stale %s: %w", ent.Name(), err)
			}
		}
	}
	return written, nil
}

// buildPins records the pins and the toolchain identity in the manifest.
func buildPins(p toolchain.Pins, id toolchain.Identity) *manifest.BuildPins {
	list := func(xs []string) []string { return append([]string{}, xs...) }
	return &manifest.BuildPins{CUDARelease: p.CUDA.Release, NvccRelease: id.NvccRelease, HostCompiler: id.HostCompiler,
		SASS: list(p.Archs), PTX: list(p.PTX), Flags: list(p.Flags), Defines: list(p.Defines),
		BuildImage: p.Images.Build}
}

func manifestKernel(r Result) manifest.Kernel {
	paths := make([]string, len(r.Unit.Inputs))
	for i, in := range r.Unit.Inputs {
		paths[i] = in.Path
	}
	sum := sha256.Sum256(r.Fatbin)
	return manifest.Kernel{Name: r.Unit.Name, Source: r.Unit.Source, ActionID: r.Unit.ID.String(),
		ClosureHash: r.Unit.ClosureHash(), Inputs: paths,
		FatbinSHA256: hex.EncodeToString(sum[:]), Size: int64(len(r.Fatbin))}
}

// writeIfChanged atomically replaces path with b unless it already holds b.
func writeIfChanged(path string, b []byte) (int, error) {
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, b) {
		return 0, nil
	}
	if err := renameio.WriteFile(path, b, 0o644); err != nil {
		return 0, fmt.Errorf("kbuild: materialize: %w", err)
	}
	return 1, nil
}
