package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"github.com/cuzk-dev/cuzk/internal/buildinfo"
	"github.com/cuzk-dev/cuzk/internal/cli"
)

// versionInfo is what `version -json` prints: the binary's identity
// (version, commit, go, module, path, from: see buildinfo.Info) and the
// embedded kernel manifest (nil when no kernels are embedded).
type versionInfo struct {
	Binary string `json:"binary"`
	buildinfo.Info
	Manifest *manifest.Manifest `json:"manifest"`
}

// versionCmd prints the binary's version and commit, then the pins that
// built the embedded kernels and each kernel's hashes, all read from the
// binary itself (the release stamp or the build info, and the embedded
// manifest checked against the embedded fatbins), never from a source
// tree; -json prints versionInfo.
func versionCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "version", "[-json]", "", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object (binary, version, commit, go, module, manifest)")
	if code, stop := cli.Parse(fs, args, stdout); stop {
		return code
	}
	info := versionInfo{Binary: "cuzk-daemon", Info: buildinfo.Get()}
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
	commit := info.Commit
	if commit == "" {
		commit = "unknown"
	} else if info.Modified {
		commit += " (modified)"
	}
	fmt.Fprintf(w, "%s %s\n  commit: %s\n  go: %s  module: %s  (version from %s)\n", info.Binary, info.Version, commit, info.Go, info.Module, info.From)
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
