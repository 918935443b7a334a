package selftest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/testseed"
)

var shared = sync.OnceValues(driver.OpenTestDevice)

// gpu returns the shared device, or skips visibly where there is no GPU or
// the binary embeds no kernels.
func gpu(tb testing.TB) *driver.Device {
	tb.Helper()
	d, err := shared()
	if errors.Is(err, driver.ErrNoGPU) {
		tb.Skipf("GPU test skipped: no CUDA GPU here (%v)", err)
	}
	require.NoError(tb, err)
	if _, err := cuda.Embedded(); errors.Is(err, cuda.ErrNoKernels) {
		tb.Skipf("GPU test skipped: %v", err)
	}
	return d
}

func TestGPUSelftest(t *testing.T) {
	d := gpu(t)
	sizes := []int{1, 25, 1<<10 - 1, 1<<16 + 1, 1 << 20}
	if testing.Short() {
		sizes = sizes[:4]
	}
	for _, n := range sizes {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			seed := testseed.Seed(t)
			rep, err := Run(context.Background(), d, rand.New(rand.NewPCG(seed, uint64(n))), n)
			require.NoError(t, err)
			t.Log("\n" + rep.String())
			require.Len(t, rep.Results, len(cases))
			for _, res := range rep.Results {
				assert.True(t, res.Pass(), "%s: %d mismatches, first at %d: %s", res.Kernel, res.Mismatches, res.First, res.Detail)
				assert.Equal(t, n, res.Elements)
				assert.Positive(t, res.GPUTime)
			}
			assert.True(t, rep.OK())
		})
	}
}

func TestGPUSelftestOpensDeviceWhenNil(t *testing.T) {
	gpu(t)
	rep, err := Run(context.Background(), nil, rand.New(rand.NewPCG(9, 9)), 100)
	require.NoError(t, err)
	assert.True(t, rep.OK(), rep.String())
}

func TestGPUSelftestStopsOnCancel(t *testing.T) {
	d := gpu(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Run(ctx, d, rand.New(rand.NewPCG(1, 2)), 10)
	assert.ErrorIs(t, err, context.Canceled)
}

// BenchmarkGPU times each kernel's launches with CUDA events; inputs are
// random (never zeros). Metrics: device ns per element and Gelem/s.
func BenchmarkGPU(b *testing.B) {
	d := gpu(b)
	for _, n := range []int{1 << 16, 1 << 20, 1 << 24} {
		xs, ys := operands(rand.New(rand.NewPCG(uint64(n), 7)), n)
		r, err := newRunner(d, n)
		require.NoError(b, err)
		for _, k := range cases {
			a, bb, _ := k.prepare(xs, ys)
			got := make([]fr.Element, n)
			b.Run(fmt.Sprintf("%s/n=%d", k.fn, n), func(b *testing.B) {
				var total time.Duration
				for b.Loop() {
					el, err := r.run(k, a, bb, got)
					require.NoError(b, err)
					total += el
				}
				perElem := float64(total.Nanoseconds()) / float64(b.N) / float64(n)
				b.ReportMetric(perElem, "devns/elem")
				b.ReportMetric(1/perElem, "Gelem/s")
			})
		}
		require.NoError(b, r.close())
	}
}
