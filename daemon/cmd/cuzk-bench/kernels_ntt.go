package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/prover/gpu"
)

// bandwidth is the pinned host↔device copy rate, bytes per second.
type bandwidth struct{ h2d, d2h float64 }

// measureBandwidth times async copies of size bytes between a pinned host
// buffer and device memory with CUDA events: median of runs after a warm-up.
func measureBandwidth(dev *driver.Device, size, runs int) (bandwidth, error) {
	var bw bandwidth
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
		bw = bandwidth{h2d: float64(size) / h2d.Seconds(), d2h: float64(size) / d2h.Seconds()}
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
	var ts samples
	for i := 0; i <= runs; i++ {
		d, err := c.Time(tm, s, f)
		if err != nil {
			return 0, err
		}
		if i > 0 {
			ts = append(ts, d)
		}
	}
	return ts.median(), nil
}

// benchNTTs times gpu.Backend.NTT at each size of cfg.ntt.
func benchNTTs(ctx context.Context, w io.Writer, dev *driver.Device, cfg kernelsConfig, rate mulRate) ([]kernelRow, error) {
	bw, err := measureBandwidth(dev, 256<<20, 5)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "pinned copies (256 MiB, CUDA events): H2D %.1f GB/s, D2H %.1f GB/s\n", bw.h2d/1e9, bw.d2h/1e9)
	be, err := gpu.New(dev)
	if err != nil {
		return nil, err
	}
	var rows []kernelRow
	var errs []error
	for _, lg := range cfg.ntt {
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
func benchNTT(be *gpu.Backend, lg int, cfg kernelsConfig, rate mulRate) (kernelRow, error) {
	n := 1 << lg
	row := kernelRow{kernel: "NTT Fr", logN: lg, checked: "not run", sppark: spparkCell(spparkNTT, lg)}
	in := randomScalars(n, cfg.seed+uint64(lg))
	work := slices.Clone(in)
	if err := be.NTT(work, false); err != nil {
		return row, err
	}
	d := fft.NewDomain(uint64(n), fft.WithoutPrecompute())
	d.FFT(in, fft.DIF) // the reference, in place: natural in, bit-reversed out
	fft.BitReverse(in)
	if i := firstDiff(in, work); i >= 0 {
		row.checked = "MISMATCH"
		return row, fmt.Errorf("%w: element %d of %d", errMismatch, i, n)
	}
	row.checked = "ok: gnark fft, every element"
	devTimes, err := be.TimeNTT(work, false, cfg.runs)
	if err != nil {
		return row, err
	}
	var e2e samples
	for range cfg.runs {
		start := time.Now()
		if err := be.NTT(work, false); err != nil {
			return row, err
		}
		e2e = append(e2e, time.Since(start))
	}
	dev := samples(devTimes).median()
	est := estimate(nttMuls(lg), rate.fr)
	row.e2e, row.transfer, row.device = ms(e2e.median()), ms(e2e.median()-dev), ms(dev)
	row.est, row.vsEst = ms(est), ratio(dev, est)
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
