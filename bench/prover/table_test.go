package proverbench

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from what WriteTable prints")

// TestTableGolden pins WriteTable's whole output: durations of every
// magnitude the cells format (tens of seconds down to fractions of a
// millisecond), peak memory measured and not, cached and timed setups.
func TestTableGolden(t *testing.T) {
	pass := fakeSize(1<<20, 200, 800, 1000, 100)
	slow := fakeSize(1<<18, 800, 1200, 1000, 100)
	slow.Ours.Prove = []time.Duration{12345 * time.Millisecond, 12346 * time.Millisecond, 12344 * time.Millisecond}
	slow.Ours.Quotient = []time.Duration{456 * time.Microsecond}
	slow.Ours.MSMA = []time.Duration{99_940 * time.Microsecond}
	slow.Ours.SetupCached, slow.Ours.Setup = false, 1234567*time.Microsecond
	slow.Gnark.Setup = 45678 * time.Millisecond
	slow.OursRSS, slow.GnarkRSS = 0, 1536<<20+700<<10
	res := &Result{Procs: 2, NumCPU: 2, Runs: 3, Sizes: []Size{pass, slow}}
	var buf bytes.Buffer
	require.NoError(t, res.WriteTable(&buf))
	path := filepath.Join("testdata", "table.golden")
	if *update {
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to write it")
	assert.Equal(t, string(want), buf.String())
}
