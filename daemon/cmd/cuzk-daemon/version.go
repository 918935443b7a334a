package main

import (
	"errors"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// version prints the pins this binary was built with and the embedded
// kernels' hashes, checked against the embedded manifest.
func version(w io.Writer) error {
	fmt.Fprintln(w, "cuzk-daemon")
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(w, "  go: %s  module: %s %s\n", bi.GoVersion, bi.Main.Path, bi.Main.Version)
	}
	pins, err := toolchain.Load(nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "pins:\n  cuda %s, nvcc build %s\n  archs %v ptx %v flags %v\n  build image %s\n  runtime image %s\n",
		pins.CUDA.Release, pins.CUDA.NvccBuild, pins.Archs, pins.PTX, pins.Flags, pins.Images.Build, pins.Images.Runtime)
	m, err := cuda.Embedded()
	if errors.Is(err, cuda.ErrNoKernels) {
		fmt.Fprintln(w, "kernels: none embedded (built before `go run mage.go kernels`)")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "kernels: built by nvcc %s, toolchain %s", m.NvccBuild, short(m.Toolchain))
	if m.Image != "" {
		fmt.Fprintf(w, " in %s", m.Image)
	}
	fmt.Fprintf(w, ", targets %v\n", m.Archs)
	for _, k := range m.Kernels {
		fmt.Fprintf(w, "  %-14s action %s  sources %s  fatbin sha256 %s  %7d bytes\n",
			k.Name, short(k.ActionID), short(k.ClosureHash), short(k.FatbinSHA256), k.Size)
	}
	return nil
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}
