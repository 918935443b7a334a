package gpu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// Batched fixed-base scalar multiplication on the GPU: the development
// setup's key points (groth16.SetupWith). Kernel units fixed_base_g1 and
// fixed_base_g2 (cuda/include/cuzk/fixed_base.cuh).

const (
	// fixedBaseStrip is how many results one kernel thread computes and
	// converts to affine with one inversion; it must equal kFixedBaseStrip
	// in cuda/include/cuzk/fixed_base.cuh.
	fixedBaseStrip = 16
	// fixedBaseBlock is the kernels' block size (their __launch_bounds__).
	fixedBaseBlock = 128
	// defaultFixedBaseChunk is how many scalars one launch takes: 4 Mi
	// scalars hold 128 MiB of scalars and 384 MiB (G1) or 768 MiB (G2) of
	// results on the device, and fill an H200 with 2^18 threads.
	defaultFixedBaseChunk = 1 << 22
)

// fixedBaseKernels are the two fixed-base kernels, loaded on first use.
type fixedBaseKernels struct {
	g1mod, g2mod *driver.Module
	g1, g2       *driver.Function
}

func loadFixedBaseKernels(c *driver.Ctx) (*fixedBaseKernels, error) {
	k := &fixedBaseKernels{}
	var err error
	if k.g1mod, err = loadMSMModule(c, "fixed_base_g1", map[string]**driver.Function{"fixed_base_g1": &k.g1}); err != nil {
		return nil, err
	}
	if k.g2mod, err = loadMSMModule(c, "fixed_base_g2", map[string]**driver.Function{"fixed_base_g2": &k.g2}); err != nil {
		_ = c.Unload(k.g1mod) // the load error is the one to report
		return nil, err
	}
	return k, nil
}

func (k *fixedBaseKernels) free(c *driver.Ctx) error {
	if k == nil {
		return nil
	}
	return errors.Join(c.Unload(k.g1mod), c.Unload(k.g2mod))
}

// FixedBaseG1 returns scalars[i]·base for every i, in affine coordinates,
// equal to gnark-crypto's bls12381.BatchScalarMultiplicationG1(base,
// scalars) point for point (infinity is (0,0)) for a base in the
// prime-order subgroup. The table of base's multiples is built on the host
// and uploaded once; the scalars go to the device and the results come back
// in chunks (4 Mi scalars), so any length fits in device memory. It stops
// between chunks once ctx is done. Like every Backend call it runs on the
// device's thread, so it is safe for concurrent use (calls are served one
// at a time); it only reads base and scalars.
func (b *Backend) FixedBaseG1(ctx context.Context, base *bls12381.G1Affine, scalars []fr.Element) ([]bls12381.G1Affine, error) {
	out := make([]bls12381.G1Affine, len(scalars))
	if len(scalars) == 0 {
		return out, nil
	}
	c := b.fixedBaseWindow(len(scalars))
	start := time.Now()
	table := fixedBaseTableG1(base, c)
	b.cfg.logger.Debug("fixed-base table", slog.String("curve", "g1"), slog.Int("window", c),
		slog.Int("points", len(table)), slog.Duration("took", time.Since(start)))
	err := b.fixedBase(ctx, "g1", c, driver.Bytes(table), scalars, driver.Bytes(out), int(unsafe.Sizeof(out[0])))
	if err != nil {
		return nil, fmt.Errorf("gpu fixed-base g1 (%d scalars): %w", len(scalars), err)
	}
	return out, nil
}

// FixedBaseG2 is FixedBaseG1 in G2, equal to
// bls12381.BatchScalarMultiplicationG2(base, scalars).
func (b *Backend) FixedBaseG2(ctx context.Context, base *bls12381.G2Affine, scalars []fr.Element) ([]bls12381.G2Affine, error) {
	out := make([]bls12381.G2Affine, len(scalars))
	if len(scalars) == 0 {
		return out, nil
	}
	c := b.fixedBaseWindow(len(scalars))
	start := time.Now()
	table := fixedBaseTableG2(base, c)
	b.cfg.logger.Debug("fixed-base table", slog.String("curve", "g2"), slog.Int("window", c),
		slog.Int("points", len(table)), slog.Duration("took", time.Since(start)))
	err := b.fixedBase(ctx, "g2", c, driver.Bytes(table), scalars, driver.Bytes(out), int(unsafe.Sizeof(out[0])))
	if err != nil {
		return nil, fmt.Errorf("gpu fixed-base g2 (%d scalars): %w", len(scalars), err)
	}
	return out, nil
}

// fixedBaseWindow is the digit width for n scalars: the cost model's, or
// the one tests force (config.fbWindow).
func (b *Backend) fixedBaseWindow(n int) int {
	if b.cfg.fbWindow != 0 {
		return b.cfg.fbWindow
	}
	return fixedBaseWindow(n)
}

// fixedBase runs the fixed-base kernel of curve over scalars with the
// table (c-bit windows) and writes the affine results (pointBytes each)
// to out, on the device thread.
func (b *Backend) fixedBase(ctx context.Context, curve string, c int, table []byte, scalars []fr.Element, out []byte,
	pointBytes int) error {
	return b.do(ctx, func(dc *driver.Ctx) error {
		st := b.st
		if err := st.settleAhead(dc); err != nil { // the stager is about to be used
			return err
		}
		if st.fb == nil {
			k, err := loadFixedBaseKernels(dc)
			if err != nil {
				return err
			}
			st.fb = k
		}
		fn := st.fb.g1
		if curve == "g2" {
			fn = st.fb.g2
		}
		chunk := min(len(scalars), b.cfg.fbChunk)
		tableLen := (len(table) + 255) &^ 255
		scalarLen := (chunk*elemBytes + 255) &^ 255
		need := tableLen + scalarLen + chunk*pointBytes
		free, _, err := dc.MemInfo()
		if err != nil {
			return err
		}
		if err := st.mem.fits(int64(need), free); err != nil {
			return err
		}
		buf, err := dc.Alloc(need)
		if err != nil {
			return fmt.Errorf("device buffers (%d bytes): %w", need, err)
		}
		st.mem.add(int64(need))
		defer func() {
			st.mem.add(-int64(need))
			_ = dc.Free(buf) // a failed free leaves nothing to act on here
		}()
		tab, sc, res := buf, buf.Add(tableLen), buf.Add(tableLen+scalarLen)
		if err := dc.HtoD(tab, table); err != nil {
			return fmt.Errorf("upload table: %w", err)
		}
		nwin := uint32(fixedBaseWindows(c))
		for lo := 0; lo < len(scalars); lo += chunk {
			if err := interrupted(ctx, dc, "fixed-base chunk"); err != nil {
				return err
			}
			n := min(chunk, len(scalars)-lo)
			if err := st.stage.upload(dc, sc, driver.Bytes(scalars[lo:lo+n])); err != nil {
				return fmt.Errorf("scalars %d…%d: %w", lo, lo+n, err)
			}
			if err := st.stage.wait(dc); err != nil {
				return fmt.Errorf("scalars %d…%d: %w", lo, lo+n, err)
			}
			threads := uint32((n + fixedBaseStrip - 1) / fixedBaseStrip)
			if err := launch1D(dc, fn, uint64(threads), fixedBaseBlock, tab, uint32(c), nwin, sc, uint32(n), threads, res); err != nil {
				return fmt.Errorf("scalars %d…%d: %w", lo, lo+n, err)
			}
			if err := dc.Synchronize(); err != nil {
				return fmt.Errorf("scalars %d…%d: kernel: %w", lo, lo+n, err)
			}
			if err := st.stage.download(dc, out[lo*pointBytes:(lo+n)*pointBytes], res); err != nil {
				return fmt.Errorf("results %d…%d: %w", lo, lo+n, err)
			}
		}
		return nil
	})
}
