package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/cuzk-dev/cuzk/cuda"
)

// versionInfo is what `version --json` prints: the binary's Go build and
// the embedded kernel manifest (nil when no kernels are embedded).
type versionInfo struct {
	Binary   string         `json:"binary"`
	Go       string         `json:"go"`
	Module   string         `json:"module"`
	Manifest *cuda.Manifest `json:"manifest"`
}

// versionCmd prints the pins that built the embedded kernels and each
// kernel's hashes, all read from the embedded manifest (checked against the
// embedded fatbins), never from a source tree; -json prints versionInfo.
func versionCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object (binary, go, module, manifest)")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	info := versionInfo{Binary: "cuzk-daemon"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		info.Go, info.Module = bi.GoVersion, strings.TrimSpace(bi.Main.Path+" "+bi.Main.Version)
	}
	m, err := cuda.Embedded()
	switch {
	case err == nil:
		info.Manifest = &m
	case !errors.Is(err, cuda.ErrNoKernels):
		fmt.Fprintln(stderr, "cuzk-daemon version:", err)
		return exitFail
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(info); err != nil {
			fmt.Fprintln(stderr, "cuzk-daemon version:", err)
			return exitFail
		}
		return exitOK
	}
	printVersion(stdout, info)
	return exitOK
}

func printVersion(w io.Writer, info versionInfo) {
	fmt.Fprintf(w, "%s\n  go: %s  module: %s\n", info.Binary, info.Go, info.Module)
	m := info.Manifest
	if m == nil {
		fmt.Fprintln(w, "kernels: none embedded (built before `go run mage.go kernels`)")
		return
	}
	if p := m.Pins; p != nil {
		fmt.Fprintf(w, "pins (that built the kernels):\n  cuda %s, nvcc build %s\n  host compiler %s\n  sass %v ptx %v flags %v defines %v\n  build image %s\n",
			p.CUDARelease, m.NvccBuild, p.HostCompiler, p.SASS, p.PTX, p.Flags, p.Defines, p.BuildImage)
	} else {
		fmt.Fprintln(w, "pins: not recorded in this manifest (built before pins were recorded)")
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
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}
