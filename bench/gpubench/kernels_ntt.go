package gpubench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/prover/gpu"
)

// Bandwidth is the pinned host↔device copy rate, bytes per second.
type Bandwidth struct{ H2D, D2H float64 }

// MeasureBandwidth times async copies of size bytes between a pinned host
// buffer and device memory with CUDA events: median of runs after a warm-up.
func MeasureBandwidth(dev *driver.Device, size, runs int) (Bandwidth, error) {
	var bw Bandwidth
	err := dev.Do(func(c *driver.Ctx) error {
		host, err := c.HostAlloc(size)
		if err != nil {
			return err
		}
		defer c.HostFree(host) // scratch buffer: a free error changes no figure
		d, err := c.Alloc(size)
		if err != nil {
			return err
		}
		defer c.Free(d) // as above
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer c.DestroyStream(s) // as above
		tm, err := c.NewTimer()
		if err != nil {
			return err
		}
		defer c.FreeTimer(tm) // as above
		up := func() error { return c.HtoDAsync(d, host.Bytes(), s) }
		down := func() error { return c.DtoHAsync(host.Bytes(), d, s) }
		h2d, err := deviceMedian(c, tm, s, runs, up)
		if err != nil {
			return err
		}
		d2h, err := deviceMedian(c, tm, s, runs, down)
		bw = Bandwidth{H2D: float64(size) / h2d.Seconds(), D2H: float64(size) / d2h.Seconds()}
		return err
	})
	if err != nil {
		return bw, fmt.Errorf("pinned copy bandwidth: %w", err)
	}
	return bw, nil
}

// deviceMedian runs f (work queued on s) once to warm up, then runs more
// times, and returns the median device time tm measured around it.
func deviceMedian(c *driver.Ctx, tm *driver.Timer, s *driver.Stream, runs int, f func() error) (time.Duration, error) {
	var ts Samples
	for i := 0; i <= runs; i++ {
		d, err := c.Time(tm, s, f)
		if err != nil {
			return 0, err
		}
		if i > 0 {
			ts = append(ts, d)
		}
	}
	return ts.Median(), nil
}

// NTTs times gpu.Backend.NTT at each size of cfg.NTT on dev, each checked
// against gnark-crypto's fft; estimates are at rate.
func NTTs(ctx context.Context, dev *driver.Device, cfg KernelsConfig, rate MulRate) ([]KernelRow, error) {
	be, err := gpu.New(dev)
	if err != nil {
		return nil, err
	}
	var rows []KernelRow
	var errs []error
	for _, lg := range cfg.NTT {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		row, err := benchNTT(be, lg, cfg, rate)
		if err != nil {
			errs = append(errs, fmt.Errorf("NTT 2^%d: %w", lg, err))
		}
		rows = append(rows, row)
	}
	return rows, errors.Join(append(errs, be.Close())...)
}

// benchNTT checks the warm-up transform of a random vector against
// gnark-crypto's fft, then times cfg.runs transforms of the evolving vector
// on the device alone (Backend.TimeNTT) and cfg.runs whole calls.
func benchNTT(be *gpu.Backend, lg int, cfg KernelsConfig, rate MulRate) (KernelRow, error) {
	n := 1 << lg
	row := KernelRow{Kernel: "NTT Fr", LogN: lg, Check: "not run", Sppark: SpparkNTT[lg]}
	in := benchinput.RandomScalars(n, cfg.Seed+uint64(lg))
	work := slices.Clone(in)
	if err := be.NTT(work, false); err != nil {
		return row, err
	}
	d := fft.NewDomain(uint64(n), fft.WithoutPrecompute())
	d.FFT(in, fft.DIF) // the reference, in place: natural in, bit-reversed out
	fft.BitReverse(in)
	if i := firstDiff(in, work); i >= 0 {
		row.Check = "MISMATCH"
		return row, fmt.Errorf("%w: element %d of %d", benchinput.ErrMismatch, i, n)
	}
	row.Check = "ok: gnark fft, every element"
	devTimes, err := be.TimeNTT(work, false, cfg.Runs)
	if err != nil {
		return row, err
	}
	var e2e Samples
	for range cfg.Runs {
		start := time.Now()
		if err := be.NTT(work, false); err != nil {
			return row, err
		}
		e2e = append(e2e, time.Since(start))
	}
	dev := Samples(devTimes).Median()
	row.E2E, row.Transfer, row.Device = e2e.Median(), e2e.Median()-dev, dev
	row.Est = Estimate(NTTMuls(lg), rate.Fr)
	return row, nil
}

// firstDiff returns the first index where a and b differ, or -1.
func firstDiff(a, b []fr.Element) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}
