package kbuild_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/toolchain"
)

// TestTheCallersGccIsNeverConsulted puts a gcc first on PATH that records
// every call and then runs gcc-12: nvcc, given -ccbin, must not run it (its
// device front end would otherwise take --gnu_version from it, an input no
// key sees), and the identity, the keys and the fatbins stay the same.
func TestTheCallersGccIsNeverConsulted(t *testing.T) {
	clean := newFixture(t)
	gcc12, err := exec.LookPath("gcc-12")
	if err != nil {
		t.Skipf("no gcc-12 to stand behind the decoy gcc (%v)", err)
	}
	calls := filepath.Join(t.TempDir(), "gcc-calls")
	decoy := t.TempDir()
	script := "#!/bin/sh\necho \"$*\" >> " + calls + "\nexec " + gcc12 + " \"$@\"\n"
	for _, name := range []string{"gcc", "cc", "g++", "c++"} {
		require.NoError(t, os.WriteFile(filepath.Join(decoy, name), []byte(script), 0o755))
	}
	t.Setenv("PATH", decoy+string(os.PathListSeparator)+os.Getenv("PATH"))
	decoyed := newFixture(t)
	assert.Equal(t, clean.tc.Identity, decoyed.tc.Identity, "the identity comes from the -ccbin compiler")

	cleanUnits, err := clean.engine().Plan(context.Background())
	require.NoError(t, err)
	decoyUnits, err := decoyed.engine().Plan(context.Background())
	require.NoError(t, err)
	require.Equal(t, len(cleanUnits), len(decoyUnits))
	for i := range cleanUnits {
		assert.Equal(t, cleanUnits[i].ID, decoyUnits[i].ID, cleanUnits[i].Name)
		assert.Contains(t, cleanUnits[i].Args, "-ccbin")
	}

	clean.mustBuild()
	decoyed.mustBuild()
	assert.Equal(t, clean.outputs(), decoyed.outputs(), "same fatbins whatever gcc is first on PATH")
	_, err = os.Stat(calls)
	assert.True(t, os.IsNotExist(err), "nvcc ran the caller's gcc")

	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	assert.Equal(t, "gcc-11", pins.CUDA.HostCompiler, "the pinned host compiler is what nvcc's profile drives")
}
