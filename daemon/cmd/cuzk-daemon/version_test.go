package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/internal/buildinfo"
)

func TestVersionJSONIsTheEmbeddedManifest(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"version", "-json"}, &out, &errb), errb.String())
	var info versionInfo
	require.NoError(t, json.Unmarshal(out.Bytes(), &info), out.String())
	assert.Equal(t, "cuzk-daemon", info.Binary)
	assert.Equal(t, buildinfo.Get(), info.Info, "version and commit as the binary knows them")
	assert.NotEmpty(t, info.Go)
	assert.NotEmpty(t, info.Version)
	var raw map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &raw))
	for _, k := range []string{"version", "commit", "go", "module", "from"} {
		assert.Contains(t, raw, k, "version -json has %q at the top level", k)
	}
	m, err := cuda.Embedded()
	if errors.Is(err, cuda.ErrNoKernels) {
		assert.Nil(t, info.Manifest, "no kernels embedded: manifest null")
		return
	}
	require.NoError(t, err)
	require.NotNil(t, info.Manifest)
	assert.Equal(t, m, *info.Manifest)
}

func TestVersionTextPrintsManifestPins(t *testing.T) {
	m := manifest.Manifest{Version: manifest.Version, NvccBuild: "cuda_x.y/compiler.1_0", Toolchain: "ab",
		Archs: []string{"sm_90"}, Pins: &manifest.BuildPins{CUDARelease: "9.9", SASS: []string{"sm_90"},
			Flags: []string{"-O1"}, BuildImage: "img@sha256:00"},
		Kernels: []manifest.Kernel{{Name: "k", ActionID: "0123456789abcdef0123", Size: 7}}}
	var out bytes.Buffer
	printVersion(&out, versionInfo{Binary: "cuzk-daemon", Info: buildinfo.Info{Version: "v0.1.0", Commit: strings.Repeat("c", 40),
		Go: "go1.0", From: buildinfo.FromStamp}, Manifest: &m})
	s := out.String()
	assert.Contains(t, s, "cuzk-daemon v0.1.0\n  commit: "+strings.Repeat("c", 40)+"\n  go: go1.0")
	assert.Contains(t, s, "cuda 9.9, nvcc build cuda_x.y/compiler.1_0")
	assert.Contains(t, s, "flags [-O1]")
	assert.Contains(t, s, "build image img@sha256:00")
	assert.Contains(t, s, "k              action 0123456789abcdef")

	m.Pins = nil
	out.Reset()
	printVersion(&out, versionInfo{Binary: "cuzk-daemon", Manifest: &m})
	assert.Contains(t, out.String(), "pins: not recorded")
	out.Reset()
	printVersion(&out, versionInfo{Binary: "cuzk-daemon", Info: buildinfo.Info{Version: buildinfo.Devel}})
	assert.Contains(t, out.String(), "kernels: none embedded")
	assert.Contains(t, out.String(), "commit: unknown")
}

func TestVersionUsage(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, exitUsage, run(context.Background(), []string{"version", "-bogus"}, &out, &errb))
}
