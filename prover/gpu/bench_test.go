package gpu

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

// benchSizes are the benchmarked transform sizes (log2).
var benchSizes = []uint32{20, 24, 27}

var benchInputs sync.Map // "logN/i" → []fr.Element, reused across b.N rounds

// benchVector returns random vector i of 2^logN elements. Limbs come from a
// seeded generator, the top limb masked so the value is below 2^252 < r: a
// valid Montgomery representative, cheap to make at 2^27 elements.
func benchVector(logN uint32, i int) []fr.Element {
	key := fmt.Sprintf("%d/%d", logN, i)
	if v, ok := benchInputs.Load(key); ok {
		return v.([]fr.Element)
	}
	v := make([]fr.Element, 1<<logN)
	workers := runtime.GOMAXPROCS(0)
	per := (len(v) + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 0; w*per < len(v); w++ {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(logN)<<32|uint64(i), uint64(w)))
			for j := w * per; j < min(len(v), (w+1)*per); j++ {
				v[j] = fr.Element{r.Uint64(), r.Uint64(), r.Uint64(), r.Uint64() >> 4}
			}
		})
	}
	wg.Wait()
	benchInputs.Store(key, v)
	return v
}

// medianMs is the median of ts in milliseconds.
func medianMs(ts []time.Duration) float64 {
	return float64(stats.Median(ts)) / float64(time.Millisecond)
}

// BenchmarkNTT times natural-order forward and inverse transforms of a
// device-resident vector with CUDA events (Backend.TimeNTT), after one
// warm-up of each.
func BenchmarkNTT(b *testing.B) {
	be := testBackend(b)
	for _, logN := range benchSizes {
		b.Run(fmt.Sprintf("2^%d", logN), func(b *testing.B) { benchNTT(b, be, logN) })
	}
}

// checkedLarge records the sizes whose GPU transform was compared with
// gnark-crypto once in this process (the tests stop at 2^16; every
// benchmarked size runs three passes).
var checkedLarge sync.Map

func checkLargeNTT(b *testing.B, be *Backend, logN uint32, in []fr.Element) {
	if _, done := checkedLarge.LoadOrStore(logN, true); done {
		return
	}
	got := clone(in)
	if err := be.NTT(got, false); err != nil {
		b.Fatal(err)
	}
	want := refNTT(in, false)
	requireSameVector(b, want, got, fmt.Sprintf("ntt 2^%d", logN))
}

func benchNTT(b *testing.B, be *Backend, logN uint32) {
	in := benchVector(logN, 0)
	checkLargeNTT(b, be, logN, in)
	fwd, err := be.TimeNTT(in, false, b.N)
	if err != nil {
		b.Fatal(err)
	}
	inv, err := be.TimeNTT(in, true, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(medianMs(fwd), "ms/ntt")
	b.ReportMetric(medianMs(inv), "ms/intt")
}

// BenchmarkQuotientH reports the device time of the whole H pipeline on
// resident vectors (ms/gpu: 3 inverse + 3 coset transforms, the pointwise
// division and the coset inverse, CUDA events, after a warm-up) and the wall
// time of a full QuotientH call with its transfers (ms/e2e).
func BenchmarkQuotientH(b *testing.B) {
	be := testBackend(b)
	for _, logN := range benchSizes {
		b.Run(fmt.Sprintf("2^%d", logN), func(b *testing.B) { benchQuotientH(b, be, logN) })
	}
}

func benchQuotientH(b *testing.B, be *Backend, logN uint32) {
	vs := [][]fr.Element{benchVector(logN, 0), benchVector(logN, 1), benchVector(logN, 2)}
	dev, err := quotientDeviceTimes(be, logN, vs, b.N)
	if err != nil {
		b.Fatal(err)
	}
	a := clone(vs[0])
	var e2e []time.Duration
	for i := -1; i < b.N; i++ {
		t0 := time.Now()
		if _, err := be.QuotientH(context.Background(), a, vs[1], vs[2]); err != nil {
			b.Fatal(err)
		}
		if i >= 0 {
			e2e = append(e2e, time.Since(t0))
		}
	}
	b.ReportMetric(medianMs(dev), "ms/gpu")
	b.ReportMetric(medianMs(e2e), "ms/e2e")
}

func quotientDeviceTimes(be *Backend, logN uint32, vs [][]fr.Element, rounds int) ([]time.Duration, error) {
	var ts []time.Duration
	err := be.dev.Do(func(c *driver.Ctx) error {
		d, err := be.prepare(c, logN)
		if err != nil {
			return err
		}
		st := be.st
		for i, v := range vs {
			if err := st.stage.upload(c, st.vecs[i], driver.Bytes(v)); err != nil {
				return err
			}
		}
		if err := st.stage.wait(c); err != nil {
			return err
		}
		tm, err := c.NewTimer()
		if err != nil {
			return err
		}
		defer c.FreeTimer(tm) //nolint:errcheck // benchmark teardown: nothing to act on
		for i := -1; i < rounds; i++ {
			dt, err := c.Time(tm, st.compute, func() error {
				for _, v := range st.vecs {
					if err := st.k.toCoset(c, st.compute, v, d); err != nil {
						return err
					}
				}
				return st.k.divideAndInterpolate(c, st.compute, st.vecs[1], st.vecs[0], st.vecs[1], st.vecs[2], d)
			})
			if err != nil {
				return err
			}
			if i >= 0 {
				ts = append(ts, dt)
			}
		}
		return nil
	})
	return ts, err
}
