package testreport_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/testreport"
)

// gpuSkips are the repository's skip messages (format strings) that speak
// of a GPU, CUDA or a device, with the class each is meant to have: these
// are the ones a careless rule would get wrong.
var gpuSkips = map[string]testreport.Class{
	"SKIP (visible): no CUDA GPU on this machine: %v":                                             testreport.NoGPU,
	"no CUDA GPU on this machine: %v":                                                             testreport.NoGPU,
	"GPU test skipped: no CUDA GPU here (%v)":                                                     testreport.NoGPU,
	"no GPU here: %v":                                                                             testreport.NoGPU,
	"no GPU here: checked exit status 3; kernels not run":                                         testreport.NoGPU,
	"no GPU here: checked exit status 3; partition not run":                                       testreport.NoGPU,
	"no GPU here: checked exit status 3 and the \"no GPU\" column; GPU proofs not run":            testreport.NoGPU,
	"a CUDA device is present (%d); the no-GPU path is not reachable here":                        testreport.GPUPresent,
	"device allows only %d bytes of opt-in shared memory":                                         testreport.SmallGPU,
	"GPU test skipped: %v":                                                                        testreport.Other, // its %v is cuda.ErrNoKernels
	"SKIP (visible): no kernels embedded in this test binary (built by `go run mage.go gpu`): %v": testreport.Other,
}

// skipCall matches a t.Skip/t.Skipf/b.Skip… call with a literal message.
var skipCall = regexp.MustCompile(`\.Skipf?\(\s*("(?:[^"\\]|\\.)*")`)

// TestRepositoryGPUSkipsAreClassified finds every literal skip message in
// the module's tests that mentions a GPU, CUDA or a device and checks that
// gpuSkips lists it and Classify agrees: a new GPU skip must be decided
// here, once, not guessed by a pattern.
func TestRepositoryGPUSkipsAreClassified(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	self, err := filepath.Abs(".")
	require.NoError(t, err)
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || path == self) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range skipCall.FindAllStringSubmatch(string(b), -1) {
			msg, err := strconv.Unquote(m[1])
			require.NoError(t, err, m[1])
			if !regexp.MustCompile(`(?i)gpu|cuda|device`).MatchString(msg) {
				continue
			}
			found++
			rel, _ := filepath.Rel(root, path)
			want, ok := gpuSkips[msg]
			if assert.True(t, ok, "%s: skip %q is not in gpuSkips: decide its class there", rel, msg) {
				assert.Equal(t, want, testreport.Classify(msg), "%s: %q", rel, msg)
			}
		}
		return nil
	})
	require.NoError(t, err)
	t.Logf("%d GPU skips found", found)
	assert.GreaterOrEqual(t, found, len(gpuSkips)-2, "the GPU tests' skips moved?")
}
