package gpubench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/bench/benchinput"
	"github.com/cuzk-dev/cuzk/prover/gpu"
)

// streamedBatches times the streamed G1 sizes again as batches of
// cfg.Batch scalar vectors over the same bases (gpu.MSM.G1Batch): each
// chunk of bases goes up once for the batch, as two partitions of one key
// share it in the daemon. A row's times are the whole batch's; each
// vector's result is checked against gnark-crypto.
func streamedBatches(ctx context.Context, m *gpu.MSM, cfg KernelsConfig) ([]KernelRow, error) {
	tile := benchinput.RandomG1(cfg.Tile, cfg.Seed+1)
	maxN := 1 << cfg.Streamed[len(cfg.Streamed)-1]
	bases := benchinput.Tiled(tile, maxN)
	vecs := make([][]fr.Element, cfg.Batch)
	for v := range vecs {
		vecs[v] = benchinput.RandomScalars(maxN, cfg.Seed+3+uint64(v))
	}
	var rows []KernelRow
	var errs []error
	for _, lg := range cfg.Streamed {
		n := 1 << lg
		row := KernelRow{Kernel: fmt.Sprintf("MSM G1 streamed, batch of %d", cfg.Batch), LogN: lg, Check: "not run"}
		err := func() error {
			if err := errors.Join(m.EvictBases(), m.PlanG1(bases[:n], cfg.StreamChunk, false)); err != nil {
				return err
			}
			sub := make([][]fr.Element, len(vecs))
			for v := range vecs {
				sub[v] = vecs[v][:n]
			}
			var recs Recorder
			rctx := recs.Context(ctx)
			first, err := m.G1Batch(rctx, bases[:n], sub)
			if err != nil {
				return err
			}
			var dev, up, e2e Samples
			for i := range cfg.Runs {
				start := time.Now()
				got, err := m.G1Batch(rctx, bases[:n], sub)
				if err != nil {
					return err
				}
				e2e = append(e2e, time.Since(start))
				rec, err := recs.LastMSM()
				if err != nil {
					return err
				}
				if rec.Points != n*len(sub) {
					return fmt.Errorf("the batch ran as %d points, not one call of %d vectors (no room for its carries?)", rec.Points, len(sub))
				}
				dev, up = append(dev, rec.Compute), append(up, rec.Upload)
				row.Bits, row.Copies, row.Windows = rec.Bits, rec.Copies, rec.Windows
				for v := range got {
					if !got[v].Equal(&first[v]) {
						row.Check = "MISMATCH"
						return fmt.Errorf("%w: run %d, vector %d differs from the warm-up", benchinput.ErrMismatch, i+1, v)
					}
				}
			}
			row.Device, row.Transfer, row.E2E = dev.Median(), up.Median(), e2e.Median()
			how := ""
			for v := range first {
				want, h, err := benchinput.RefG1(tile, bases[:n], sub[v], n <= cfg.DirectMax)
				if err != nil {
					return err
				}
				if !first[v].Equal(&want) {
					row.Check = "MISMATCH vs " + h
					return fmt.Errorf("%w: vector %d, %s", benchinput.ErrMismatch, v, h)
				}
				how = h
			}
			row.Check = fmt.Sprintf("ok: %d vectors, %s", len(first), how)
			return nil
		}()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s 2^%d: %w", row.Kernel, lg, err))
		}
		rows = append(rows, row)
	}
	return rows, errors.Join(append(errs, m.EvictBases())...)
}
