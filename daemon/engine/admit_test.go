package engine

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/keys"
)

// BenchmarkAdmit is the admission's cost on every Submit: porep-synth's
// own counts (cached probes) and the budget checks.
func BenchmarkAdmit(b *testing.B) {
	e := newEngine(b, Config{HostBudget: 1 << 40, HostTotal: 1 << 40}, newFake(b, "fake0"))
	for _, size := range []uint64{1 << 16, 1 << 27} {
		c := porep(b, size)
		b.Run(c.Key, func(b *testing.B) {
			for b.Loop() {
				if _, err := e.Admit(context.Background(), c, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestAdmitCountsADevelopmentSetup: a development key's peak holds its
// setup's scalars beside the compile, and a host budget one byte short of
// it refuses the request before any work, naming the setup; a daemon that
// makes no development keys counts none.
func TestAdmitCountsADevelopmentSetup(t *testing.T) {
	c := porep(t, 1<<12)
	e := newEngine(t, Config{}, newFake(t, "fake0"))
	sh, err := e.cfg.Keys.Shape(context.Background(), c)
	require.NoError(t, err)
	n, err := e.Admit(context.Background(), c, 1)
	require.NoError(t, err)
	require.Positive(t, n.Setup)
	assert.Equal(t, sh.SetupBytes(), n.Setup)
	assert.Equal(t, n.Key+n.Compile+n.Setup, n.Peak(), "the load is the peak here")

	e.cfg.HostTotal = n.Peak() - 1
	_, err = e.Admit(context.Background(), c, 1)
	require.ErrorIs(t, err, ErrNeverFits)
	assert.Contains(t, err.Error(), fmt.Sprintf("development setup %d", n.Setup))

	km, err := keys.New(keys.Config{Dir: t.TempDir(), NoGenerate: true})
	require.NoError(t, err)
	t.Cleanup(km.Close)
	p := newEngine(t, Config{Keys: km}, newFake(t, "fake1"))
	n, err = p.Admit(context.Background(), c, 1)
	require.NoError(t, err)
	assert.Zero(t, n.Setup, "no development keys: no setup")
}
