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
	// Image is the container image the toolchain runs in when its toolchain
	// is not the pinned one (see KeyIdentity), else "".
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

// PinnedIdentity returns the identity the pins give: nvcc's build and
// release lines and the host compiler's version line, plus image when it is
// not "" (a container whose toolchain is not the pinned one). Keys computed
// from it need no local nvcc; whatever compiles must then match it
// (Mismatch). A native build and one inside cuzk's build image both have
// PinnedIdentity(p, "").
func PinnedIdentity(p Pins, image string) Identity {
	return Identity{NvccBuild: p.CUDA.NvccBuild, NvccRelease: p.CUDA.NvccRelease,
		HostCompiler: p.CUDA.HostCompilerVersion, Image: image}
}
