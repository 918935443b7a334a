package gpubench

import (
	"context"
	"errors"
	"fmt"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/gpu"
)

// msmBench is one curve's MSM under test: B is the affine base type, J the
// Jacobian result type.
type msmBench[B, J any] struct {
	name  string
	g2    bool
	tile  []B
	gpu   func(context.Context, []B, []fr.Element) (J, error)
	ref   func(tile, bases []B, s []fr.Element, direct bool) (J, string, error)
	equal func(a, b *J) bool
	// plan, when not nil, plans each size's bases before its first call
	// (streamed: gpu.MSM.PlanG1); EvictBases ends it.
	plan func([]B) error
}

// MSMs times the G1 and G2 sizes of cfg on one MSM engine on dev, each
// checked against gnark-crypto; estimates are at rate.
func MSMs(ctx context.Context, dev *driver.Device, cfg KernelsConfig, rate MulRate) ([]KernelRow, error) {
	m, err := gpu.NewMSM(dev, nil)
	if err != nil {
		return nil, err
	}
	if err := m.SetTableMemory(cfg.Tables); err != nil {
		return nil, errors.Join(err, m.Close())
	}
	var rows []KernelRow
	var errs []error
	if len(cfg.G1) > 0 {
		b := msmBench[bls12381.G1Affine, bls12381.G1Jac]{name: "MSM G1", tile: benchinput.RandomG1(cfg.Tile, cfg.Seed+1),
			gpu: m.G1, ref: benchinput.RefG1, equal: (*bls12381.G1Jac).Equal}
		r, err := b.sizes(ctx, m, cfg, cfg.G1, rate)
		rows, errs = append(rows, r...), append(errs, err)
	}
	if len(cfg.Streamed) > 0 {
		b := msmBench[bls12381.G1Affine, bls12381.G1Jac]{name: "MSM G1 streamed", tile: benchinput.RandomG1(cfg.Tile, cfg.Seed+1),
			gpu: m.G1, ref: benchinput.RefG1, equal: (*bls12381.G1Jac).Equal}
		b.plan = func(bases []bls12381.G1Affine) error { return m.PlanG1(bases, cfg.StreamChunk, false) }
		r, err := b.sizes(ctx, m, cfg, cfg.Streamed, rate)
		rows, errs = append(rows, r...), append(errs, err)
		if cfg.Batch > 1 {
			r, err := streamedBatches(ctx, m, cfg)
			rows, errs = append(rows, r...), append(errs, err)
		}
	}
	if len(cfg.G2) > 0 {
		b := msmBench[bls12381.G2Affine, bls12381.G2Jac]{name: "MSM G2", g2: true, tile: benchinput.RandomG2(cfg.Tile, cfg.Seed+2),
			gpu: m.G2, ref: benchinput.RefG2, equal: (*bls12381.G2Jac).Equal}
		r, err := b.sizes(ctx, m, cfg, cfg.G2, rate)
		rows, errs = append(rows, r...), append(errs, err)
	}
	return rows, errors.Join(append(errs, m.Close())...)
}

// sizes benchmarks every size in logs (ascending) on prefixes of one tiled
// bases slice and one scalar vector, then frees the device copy of the bases.
// Each size is longer than the resident prefix before it, so each uploads
// its own bases and, with a table budget, builds its own table.
func (mb *msmBench[B, J]) sizes(ctx context.Context, m *gpu.MSM, cfg KernelsConfig, logs []int, rate MulRate) ([]KernelRow, error) {
	maxN := 1 << logs[len(logs)-1]
	bases := benchinput.Tiled(mb.tile, maxN)
	scalars := benchinput.RandomScalars(maxN, cfg.Seed+3)
	var rows []KernelRow
	var errs []error
	for _, lg := range logs {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		if mb.plan != nil {
			if err := errors.Join(m.EvictBases(), mb.plan(bases[:1<<lg])); err != nil {
				return rows, fmt.Errorf("%s 2^%d: %w", mb.name, lg, err)
			}
		}
		row, err := mb.one(ctx, cfg, bases[:1<<lg], scalars[:1<<lg], rate)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s 2^%d: %w", mb.name, lg, err))
		}
		rows = append(rows, row)
	}
	return rows, errors.Join(append(errs, m.EvictBases())...)
}

// one times one size: a warm-up (which also uploads the bases), cfg.Runs
// timed calls that must each return the warm-up's result, then the check
// against gnark-crypto.
func (mb *msmBench[B, J]) one(ctx context.Context, cfg KernelsConfig, bases []B, s []fr.Element, rate MulRate) (KernelRow, error) {
	n := len(s)
	row := KernelRow{Kernel: mb.name, LogN: stats.Log2(n), Check: "not run"}
	var recs Recorder
	ctx = recs.Context(ctx)
	first, err := mb.gpu(ctx, bases, s)
	if err != nil {
		return row, err
	}
	warm, err := recs.LastMSM()
	if err != nil {
		return row, err
	}
	if warm.Copies > 1 {
		row.Build = warm.Bases
	}
	var dev, up, e2e Samples
	for i := range cfg.Runs {
		start := time.Now()
		got, err := mb.gpu(ctx, bases, s)
		if err != nil {
			return row, err
		}
		e2e = append(e2e, time.Since(start))
		rec, err := recs.LastMSM()
		if err != nil {
			return row, err
		}
		dev, up = append(dev, rec.Compute), append(up, rec.Upload)
		row.Bits, row.Copies, row.Windows = rec.Bits, rec.Copies, rec.Windows
		if !mb.equal(&got, &first) {
			row.Check = "MISMATCH"
			return row, fmt.Errorf("%w: run %d differs from the warm-up", benchinput.ErrMismatch, i+1)
		}
	}
	row.Device, row.Transfer, row.E2E = dev.Median(), up.Median(), e2e.Median()
	row.Est = Estimate(MSMMuls(n, row.Bits, row.Windows, mb.g2), rate.Fp)
	if !mb.g2 {
		row.Sppark = SpparkMSMG1[row.LogN]
	}
	want, how, err := mb.ref(mb.tile, bases, s, n <= cfg.DirectMax)
	if err != nil {
		return row, err
	}
	if !mb.equal(&first, &want) {
		row.Check = "MISMATCH vs " + how
		return row, fmt.Errorf("%w: %s", benchinput.ErrMismatch, how)
	}
	row.Check = "ok: " + how
	return row, nil
}
