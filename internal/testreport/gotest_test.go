package testreport_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/testreport"
)

// TestGoTestReadsThisGo runs the Go toolchain at hand on a small module, so
// a change in go test's -json output shows here, not as a silent summary.
func TestGoTestReadsThisGo(t *testing.T) {
	var out, stderr bytes.Buffer
	r, err := testreport.New(&out, testreport.WithModule("example.com/mod"))
	require.NoError(t, err)
	err = testreport.GoTest(context.Background(), r, "testdata/mod", testreport.Selection{}, time.Minute, &stderr)
	require.NoError(t, err, stderr.String())
	s := r.Summary()
	assert.Equal(t, 1, s.Passed)
	require.Len(t, s.Skips, 2, out.String())
	assert.Regexp(t, `^ok   \. \S+  \(1 passed, 2 skipped\)\n$`, out.String())
	assert.ErrorIs(t, s.CheckCI(), testreport.ErrSkipped)

	out.Reset()
	r, err = testreport.New(&out)
	require.NoError(t, err)
	err = testreport.GoTest(context.Background(), r, "testdata/mod", testreport.Selection{Run: "NoGPU"}, time.Minute, &stderr)
	require.NoError(t, err)
	assert.NoError(t, r.Summary().CheckCI(), "CUZK_TEST_RUN picks the test with the allowed skip only")
	assert.Len(t, r.Summary().Skips, 1)

	err = testreport.GoTest(context.Background(), r, "testdata/mod", testreport.Selection{Packages: "./nothere"}, time.Minute, &stderr)
	assert.ErrorContains(t, err, "go test ./nothere")
}
