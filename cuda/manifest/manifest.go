// Package manifest describes built CUDA kernels: each fatbin's build key
// (ActionID), source closure and digest, and the pinned toolchain that built
// them. The kernel build engine (toolchain/kbuild) writes it next to the
// fatbins, package cuda embeds it, and releases and `cuzk-daemon version`
// read it; it holds no fatbins itself, so reading a manifest does not pull
// the kernels into a binary.
package manifest

import (
	"encoding/json"
	"fmt"
	"sort"
)

// File is the name of the manifest inside cuda/fatbin/.
const File = "manifest.json"

// Version is the schema version written into every manifest.
const Version = 1

// Kernel describes one materialized kernel unit.
type Kernel struct {
	// Name is the unit's name: its path under cuda/kernels without ".cu".
	Name string `json:"name"`
	// Source is the unit's path relative to the repository root.
	Source string `json:"source"`
	// ActionID is the hex build key: every input that went into the build.
	ActionID string `json:"action_id"`
	// ClosureHash is the hex hash of the paths and bytes of the .cu and
	// every file it transitively includes.
	ClosureHash string `json:"closure_hash"`
	// Inputs lists the source closure, relative to the repository root.
	Inputs []string `json:"inputs"`
	// FatbinSHA256 is the hex sha256 of the fatbin bytes.
	FatbinSHA256 string `json:"fatbin_sha256"`
	// Size is the fatbin's length in bytes.
	Size int64 `json:"size"`
}

// Manifest describes every kernel embedded in a binary and the toolchain
// that built them.
type Manifest struct {
	Version int `json:"version"`
	// Toolchain is the hex identity hash of the pinned toolchain.
	Toolchain string `json:"toolchain"`
	// NvccBuild is the nvcc build string that compiled the kernels.
	NvccBuild string `json:"nvcc_build"`
	// Image is the pinned build image when built in a container, else "".
	Image string `json:"image,omitempty"`
	// Archs are the -gencode targets, e.g. "sm_90", "compute_90".
	Archs []string `json:"archs"`
	// Pins are the toolchain pins the kernels were built with, recorded
	// when they were built (absent in manifests written before the field).
	Pins    *BuildPins `json:"pins,omitempty"`
	Kernels []Kernel   `json:"kernels"`
}

// BuildPins are the toolchain pins that built a manifest's kernels: what
// `cuzk-daemon version` reports, independent of any source tree.
type BuildPins struct {
	// CUDARelease is the pinned CUDA release ("11.8").
	CUDARelease string `json:"cuda_release"`
	// NvccRelease is the "release ..." line of the nvcc that ran.
	NvccRelease string `json:"nvcc_release,omitempty"`
	// HostCompiler is the first `--version` line of nvcc's host compiler.
	HostCompiler string `json:"host_compiler,omitempty"`
	// SASS and PTX are the pinned targets ("sm_90"; "compute_90").
	SASS []string `json:"sass"`
	PTX  []string `json:"ptx"`
	// Flags and Defines are the nvcc flags and -D defines of every unit.
	Flags   []string `json:"flags"`
	Defines []string `json:"defines"`
	// BuildImage is the pinned build image, by digest (the kernels were
	// built in it when Manifest.Image is set).
	BuildImage string `json:"build_image"`
}

// Lookup returns the kernel called name.
func (m Manifest) Lookup(name string) (Kernel, bool) {
	for _, k := range m.Kernels {
		if k.Name == name {
			return k, true
		}
	}
	return Kernel{}, false
}

// Sort orders kernels by name so that encodings are deterministic.
func (m *Manifest) Sort() {
	sort.Slice(m.Kernels, func(i, j int) bool { return m.Kernels[i].Name < m.Kernels[j].Name })
}

// Encode returns the canonical, indented JSON of m (kernels sorted).
func (m Manifest) Encode() ([]byte, error) {
	m.Kernels = append([]Kernel(nil), m.Kernels...)
	m.Sort()
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return append(b, '\n'), nil
}

// Decode parses and checks a manifest.
func Decode(b []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return Manifest{}, fmt.Errorf("decode manifest: %w", err)
	}
	if m.Version != Version {
		return Manifest{}, fmt.Errorf("decode manifest: version %d, want %d", m.Version, Version)
	}
	return m, nil
}
