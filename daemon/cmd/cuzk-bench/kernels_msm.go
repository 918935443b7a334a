package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
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
}

// benchMSMs times the G1 and G2 sizes of cfg on one MSM engine.
func benchMSMs(ctx context.Context, dev *driver.Device, cfg kernelsConfig, rate mulRate) ([]kernelRow, error) {
	m, err := gpu.NewMSM(dev, nil)
	if err != nil {
		return nil, err
	}
	if err := m.SetTableMemory(cfg.tables); err != nil {
		return nil, errors.Join(err, m.Close())
	}
	var rows []kernelRow
	var errs []error
	if len(cfg.g1) > 0 {
		b := msmBench[bls12381.G1Affine, bls12381.G1Jac]{name: "MSM G1", tile: randomG1(cfg.tile, cfg.seed+1),
			gpu: m.G1, ref: refG1, equal: equalG1}
		r, err := b.sizes(ctx, m, cfg, cfg.g1, rate)
		rows, errs = append(rows, r...), append(errs, err)
	}
	if len(cfg.g2) > 0 {
		b := msmBench[bls12381.G2Affine, bls12381.G2Jac]{name: "MSM G2", g2: true, tile: randomG2(cfg.tile, cfg.seed+2),
			gpu: m.G2, ref: refG2, equal: equalG2}
		r, err := b.sizes(ctx, m, cfg, cfg.g2, rate)
		rows, errs = append(rows, r...), append(errs, err)
	}
	return rows, errors.Join(append(errs, m.Close())...)
}

// sizes benchmarks every size in logs (ascending) on prefixes of one tiled
// bases slice and one scalar vector, then frees the device copy of the bases.
// Each size is longer than the resident prefix before it, so each uploads
// its own bases and, with a table budget, builds its own table.
func (mb *msmBench[B, J]) sizes(ctx context.Context, m *gpu.MSM, cfg kernelsConfig, logs []int, rate mulRate) ([]kernelRow, error) {
	maxN := 1 << logs[len(logs)-1]
	bases := tiled(mb.tile, maxN)
	scalars := randomScalars(maxN, cfg.seed+3)
	var rows []kernelRow
	var errs []error
	for _, lg := range logs {
		if err := ctx.Err(); err != nil {
			return rows, err
		}
		row, err := mb.one(ctx, m, cfg, bases[:1<<lg], scalars[:1<<lg], rate)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s 2^%d: %w", mb.name, lg, err))
		}
		rows = append(rows, row)
	}
	return rows, errors.Join(append(errs, m.EvictBases())...)
}

// one times one size: a warm-up (which also uploads the bases), cfg.runs
// timed calls that must each return the warm-up's result, then the check
// against gnark-crypto.
func (mb *msmBench[B, J]) one(ctx context.Context, m *gpu.MSM, cfg kernelsConfig, bases []B, s []fr.Element, rate mulRate) (kernelRow, error) {
	n := len(s)
	row := kernelRow{kernel: mb.name, logN: log2(n), checked: "not run"}
	var recs phaseRecorder
	ctx = recs.context(ctx)
	first, err := mb.gpu(ctx, bases, s)
	if err != nil {
		return row, err
	}
	warm, err := recs.lastMSM()
	if err != nil {
		return row, err
	}
	if warm.Copies > 1 {
		row.build = ms(warm.Bases)
	}
	var dev, up, e2e samples
	for i := range cfg.runs {
		start := time.Now()
		got, err := mb.gpu(ctx, bases, s)
		if err != nil {
			return row, err
		}
		e2e = append(e2e, time.Since(start))
		rec, err := recs.lastMSM()
		if err != nil {
			return row, err
		}
		dev, up = append(dev, rec.Compute), append(up, rec.Upload)
		row.bits, row.copies, row.windows = rec.Bits, rec.Copies, rec.Windows
		if !mb.equal(&got, &first) {
			row.checked = "MISMATCH"
			return row, fmt.Errorf("%w: run %d differs from the warm-up", errMismatch, i+1)
		}
	}
	est := estimate(msmMuls(n, row.bits, row.windows, mb.g2), rate.fp)
	row.device, row.transfer, row.e2e = ms(dev.median()), ms(up.median()), ms(e2e.median())
	row.est, row.vsEst = ms(est), ratio(dev.median(), est)
	row.sppark = "-"
	if !mb.g2 {
		row.sppark = spparkCell(spparkMSMG1, row.logN)
	}
	want, how, err := mb.ref(mb.tile, bases, s, n <= cfg.directMax)
	if err != nil {
		return row, err
	}
	if !mb.equal(&first, &want) {
		row.checked = "MISMATCH vs " + how
		return row, fmt.Errorf("%w: %s", errMismatch, how)
	}
	row.checked = "ok: " + how
	return row, nil
}
