package kbuild

import (
	"crypto/sha256"
	"fmt"
	"io"
	"strings"

	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

// EngineVersion is fed to every key; bump it when the engine changes how it
// builds, so every unit rebuilds. 2: nvcc runs with address randomization
// off, so entries built before (some of them one of ptxas's random layouts)
// are never served again.
const EngineVersion = "cuzk-kbuild/2"

// OutPlaceholder stands for the output path in the keyed argument list.
const OutPlaceholder = "$OUT"

// Unit is one kernel unit with its key.
type Unit struct {
	Name   string       // source path under the kernel dir, without .cu
	Source string       // source path relative to the root
	Inputs []Input      // the source closure
	Args   []string     // nvcc arguments, with OutPlaceholder for the output
	Lines  []string     // every line fed to the key, in order
	ID     cas.ActionID // sha256 of Lines
}

// keyLines lists what goes into a unit's ActionID. Each line is "kind
// value", which Explain reads back to say what changed.
func keyLines(id toolchain.Identity, p toolchain.Pins, root string, args []string, inputs []Input) []string {
	lines := []string{"engine " + EngineVersion}
	if embedsPaths(p.Flags) {
		// Line tables and debug info carry the tree's absolute path: a fatbin
		// built in another checkout is not this one's.
		lines = append(lines, "root "+root)
	}
	lines = append(lines, id.Lines()...)
	for _, a := range p.Archs {
		lines = append(lines, "arch "+a)
	}
	for _, a := range p.PTX {
		lines = append(lines, "ptx "+a)
	}
	for _, f := range p.Flags {
		lines = append(lines, "flag "+f)
	}
	for _, d := range p.Defines {
		lines = append(lines, "define "+d)
	}
	lines = append(lines, "argv "+strings.Join(args, " "))
	for _, in := range inputs {
		lines = append(lines, "input "+in.Path+" "+in.Sum)
	}
	return lines
}

func hashLines(lines []string, debug io.Writer, name string) cas.ActionID {
	h := sha256.New()
	for _, l := range lines {
		fmt.Fprintln(h, l)
		if debug != nil {
			fmt.Fprintf(debug, "HASH %s: %s\n", name, l)
		}
	}
	var id cas.ActionID
	copy(id[:], h.Sum(nil))
	if debug != nil {
		fmt.Fprintf(debug, "HASH %s: => %s\n", name, id)
	}
	return id
}

// CanonicalRoot is the tree location every compile tells the device
// front end (cicc) it runs in. cicc names file-local device symbols
// (static or anonymous-namespace __constant__ and __device__ variables)
// after a hash of the source's absolute path, so without it the same
// inputs give other fatbin bytes in every checkout: a remote cache hit
// would differ from a local compile, and CUZK_VERIFY=1 would fail on any
// machine but the uploader's.
const CanonicalRoot = "/cuzk-kbuild"

// nvccArgs returns the nvcc argument list for a unit (without the nvcc
// binary): the pinned host compiler for every stage (-ccbin: without it nvcc
// takes the device front end's --gnu_version from whatever gcc is first on
// the caller's PATH, an input no key would see), device-only fatbin, the
// canonical source path, pinned flags,
// targets, defines, include path, output, source. Paths are relative to the
// root, so the list (and the key) is the same in every checkout.
func nvccArgs(p toolchain.Pins, includes []string, out, source string) []string {
	args := []string{"-ccbin", p.CUDA.HostCompiler, "-fatbin", "-Xcicc", "--orig_src_path_name=" + CanonicalRoot + "/" + source}
	args = append(args, p.Flags...)
	args = append(args, p.Gencode()...)
	for _, d := range p.Defines {
		args = append(args, "-D"+d)
	}
	for _, inc := range includes {
		args = append(args, "-I", inc)
	}
	return append(args, "-o", out, source)
}

// pathFlags make nvcc write source paths into the fatbin.
var pathFlags = []string{"-lineinfo", "--generate-line-info", "-G", "--device-debug", "-g", "--debug"}

func embedsPaths(flags []string) bool {
	for _, f := range flags {
		for _, pf := range pathFlags {
			if f == pf {
				return true
			}
		}
	}
	return false
}
