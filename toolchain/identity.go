package toolchain

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Identity is what a kernel build key includes about the toolchain: what
// compiled the code, not where it is installed. Two machines with equal
// identities produce the same fatbin bytes for the same inputs.
type Identity struct {
	// NvccBuild is the "Build ..." line of `nvcc --version`.
	NvccBuild string
	// NvccRelease is the "release ..." line of `nvcc --version`.
	NvccRelease string
	// HostCompiler is the first line of `--version` of the host compiler nvcc runs.
	HostCompiler string
	// Image is the pinned container image when building inside it, else "".
	Image string
}

// Lines returns the identity as the "key value" lines fed to a hash.
func (id Identity) Lines() []string {
	lines := []string{
		"nvcc-build " + id.NvccBuild,
		"nvcc-release " + id.NvccRelease,
		"host-compiler " + id.HostCompiler,
	}
	if id.Image != "" {
		lines = append(lines, "image "+id.Image)
	}
	return lines
}

// Hash returns the hex sha256 of Lines.
func (id Identity) Hash() string {
	h := sha256.New()
	for _, l := range id.Lines() {
		fmt.Fprintln(h, l)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// String renders the identity for people.
func (id Identity) String() string { return strings.Join(id.Lines(), "; ") }

// PinnedIdentity returns the identity the pins give a native build (image
// "") or a build inside image: nvcc's build and release lines and, natively,
// the host compiler's version line. Keys computed from it need no local
// nvcc; whatever compiles must then match it (Mismatch).
func PinnedIdentity(p Pins, image string) Identity {
	id := Identity{NvccBuild: p.CUDA.NvccBuild, NvccRelease: p.CUDA.NvccRelease, Image: image}
	if image == "" {
		id.HostCompiler = p.CUDA.HostCompilerVersion
	}
	return id
}
