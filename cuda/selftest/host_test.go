package selftest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// TestHostEmulatedKernels compiles cuzk/fr.cuh for the host (ptx.cuh then
// emulates the PTX carry flag instruction by instruction) and checks every
// kernel's arithmetic against gnark-crypto, so CI machines without a GPU
// still test the device code's instruction sequence.
func TestHostEmulatedKernels(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skipf("host emulation skipped: no g++ (%v)", err)
	}
	trackInputs(t)
	bin := filepath.Join(t.TempDir(), "fr_host")
	out, err := exec.Command(cxx, "-std=c++17", "-O2", "-Wall", "-Wno-unknown-pragmas",
		"-I", "../include", "-o", bin, "testdata/fr_host.cc").CombinedOutput()
	require.NoError(t, err, "compile fr_host: %s", out)
	n := 1<<12 + 1
	if testing.Short() {
		n = 257
	}
	xs, ys := operands(rand.New(rand.NewPCG(11, 13)), n)
	for _, k := range cases {
		t.Run(k.fn, func(t *testing.T) {
			a, b, want := k.prepare(xs, ys)
			var stdin, stdout, stderr bytes.Buffer
			stdin.Write(driver.Bytes(a))
			stdin.Write(driver.Bytes(b))
			cmd := exec.Command(bin, k.fn, fmt.Sprint(n))
			cmd.Stdin, cmd.Stdout, cmd.Stderr = &stdin, &stdout, &stderr
			require.NoError(t, cmd.Run(), "fr_host %s: %s", k.fn, stderr.String())
			require.Equal(t, n*fr.Bytes, stdout.Len())
			got := make([]fr.Element, n)
			copy(driver.Bytes(got), stdout.Bytes())
			res := result(k, a, b, got, want, 0)
			assert.Zero(t, res.Mismatches, "%s: first at %d: %s", k.fn, res.First, res.Detail)
		})
	}
}

// trackInputs reads the headers and the harness in the test process, so that
// go test's result cache notices when any of them changes (it tracks files
// the test opens, not those a child compiler opens).
func trackInputs(t *testing.T) {
	files, err := filepath.Glob("../include/cuzk/*.cuh")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range append(files, "testdata/fr_host.cc") {
		_, err := os.ReadFile(f)
		require.NoError(t, err)
	}
}
