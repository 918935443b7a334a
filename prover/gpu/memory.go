package gpu

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

// ErrDeviceMemory reports a job that does not fit in the device memory that
// is free or allowed (WithMemoryLimit). It is returned before allocating.
var ErrDeviceMemory = errors.New("gpu: job does not fit in device memory")

// Device memory per transform size n = 2^L (fr elements of 32 bytes): the
// Backend keeps three work vectors (a, b, c of QuotientH; NTT and INTT use
// the first two), the twiddle table ω^i (i < n/2) and small scale tables:
//
//	vectors 3·32·n + twiddles 16·n + scale tables 4·(2^⌈L/2⌉ + 2^⌊L/2⌋)·32 ≈ 112·n
//
//	n      2^16    2^20     2^24      2^26    2^27
//	bytes  7 MiB   112 MiB  1.75 GiB  7 GiB   14 GiB
//
// Twiddle and scale tables stay resident per size once built; the vectors
// are kept for the largest size seen and reused. The lean quotient holds
// two work vectors, not three (80·n: 10 GiB at 2^27); it is what a key plan
// picks where the third vector's room is worth more to the MSMs, and what
// a quotient falls back to where three do not fit. Host side, the Backend pins
// two staging chunks (WithStagingChunk, 2×64 MiB by default).

// twiddleBytes is the device memory of the tables of a size-2^logN domain.
func twiddleBytes(logN uint32) int64 {
	s := splitLog(logN)
	tables := int64(numScaleKinds) * int64(1<<s+1<<(logN-s)) * int64(elemBytes)
	return int64(max(1, (1<<logN)/2))*int64(elemBytes) + tables
}

// vectorBytes is the device memory of nvec vectors of 2^logN elements.
func vectorBytes(nvec int, logN uint32) int64 {
	return int64(nvec) << logN * int64(elemBytes)
}

// QuotientHBytes returns the device memory QuotientH needs for n = 2^logN
// with nothing resident yet.
func QuotientHBytes(logN uint32) int64 { return vectorBytes(3, logN) + twiddleBytes(logN) }

// QuotientHLeanBytes is QuotientHBytes for the lean quotient: two work
// vectors.
func QuotientHLeanBytes(logN uint32) int64 { return vectorBytes(2, logN) + twiddleBytes(logN) }

// deviceMemory counts the device bytes one Backend holds, its NTT state
// and its MSM engine together, against the cap of WithMemoryLimit (limit 0:
// none). An MSM engine made by NewMSM counts for itself, without a cap. It
// is touched only on the device thread.
type deviceMemory struct {
	limit, held int64
	// now and peak mirror held for readers off the device thread
	// (Backend.MemoryHeld).
	now, peak atomic.Int64
}

// add changes held by n bytes (negative: freed) and records the peak.
func (m *deviceMemory) add(n int64) {
	m.held += n
	m.now.Store(m.held)
	if m.held > m.peak.Load() {
		m.peak.Store(m.held) // one writer: the device thread
	}
}

// fits checks that holding extra more bytes stays within the limit and
// within free memory (see fits).
func (m *deviceMemory) fits(extra, free int64) error { return fits(m.held, extra, free, m.limit) }

// fitHeadroom is the free device memory fits keeps for the driver.
const fitHeadroom = 256 << 20

// fits checks that growing the Backend's device memory from held by extra
// bytes stays within limit (0: none) and within free memory, keeping
// fitHeadroom for the driver.
func fits(held, extra, free, limit int64) error {
	if extra <= 0 {
		return nil
	}
	if limit > 0 && held+extra > limit {
		return fmt.Errorf("%w: needs %d more bytes on top of %d held, limit %d", ErrDeviceMemory, extra, held, limit)
	}
	if extra+fitHeadroom > free {
		return fmt.Errorf("%w: needs %d more bytes, %d free", ErrDeviceMemory, extra, free)
	}
	return nil
}

// MSMBytes returns the device memory an MSM of n points needs with nothing
// resident, in G1 (g2 false) or G2, when the engine may spend table bytes on
// tables of multiples (SetTableMemory): its bases with their table, which
// stay resident, and the engine's scratch arena, kept for the largest MSM
// seen. The arena here is sized for the most bucket_sum threads a plan takes
// (nb/8 per window); on a device its small window buffers are at most that.
//
// Without a table:
//
//	points   G1 bases   G1 scratch   G2 bases   G2 scratch
//	2^20      96 MiB      0.5 GiB    192 MiB      0.8 GiB
//	2^24     1.5 GiB      6.3 GiB      3 GiB     10.3 GiB
//	2^26       6 GiB     12.7 GiB     12 GiB     16.7 GiB
//	2^27      12 GiB     21.2 GiB     24 GiB     25.2 GiB
//
// With a full table (a budget of 15 copies or more; the bases included,
// one bucket window):
//
//	points   copies   window   G1 table   G1 scratch   G2 table   G2 scratch
//	2^20       14      19      1.3 GiB      0.3 GiB    2.6 GiB      0.5 GiB
//	2^24       12      22       18 GiB      3.3 GiB     36 GiB      4.5 GiB
//	2^26       11      24       66 GiB     12.7 GiB    132 GiB     17.6 GiB
//
// The MSM engine checks the free device memory, and a Backend's memory
// limit (WithMemoryLimit), before it allocates, and refuses a job that does
// not fit with an error wrapping ErrDeviceMemory.
func MSMBytes(n int, g2 bool, table int64) (bases, scratch int64, err error) {
	point, xyzz := unsafe.Sizeof(bls12381.G1Affine{}), unsafe.Sizeof(g1XYZZ{})
	if g2 {
		point, xyzz = unsafe.Sizeof(bls12381.G2Affine{}), unsafe.Sizeof(g2XYZZ{})
	}
	if n < 1 || n > msmMaxPoints {
		return 0, 0, fmt.Errorf("gpu msm: %d points, want 1 … %d", n, msmMaxPoints)
	}
	t, err := newMSMTable(n, maxCopies(n, int(point), table), 0)
	if err != nil {
		return 0, 0, err
	}
	p, err := newMSMPlanTable(n, t, 0, math.MaxUint32)
	if err != nil {
		return 0, 0, err
	}
	_, arena := p.layout(0, int(xyzz))
	return int64(t.copies) * int64(n) * int64(point), int64(arena), nil
}

// MemoryHeld returns the device bytes the Backend holds now (NTT domains,
// work vectors, the MSM engine's resident bases, tables and arena, the
// fixed-base buffers) and the most it has held at once. Safe to call from
// any goroutine while the Backend works.
func (b *Backend) MemoryHeld() (now, peak int64) { return b.st.mem.now.Load(), b.st.mem.peak.Load() }

// quotientHeld is the device memory a quotient over 2^logN reuses of what
// the Backend holds: its work vectors and the domain's tables.
func (st *state) quotientHeld(logN uint32) int64 {
	var n int64
	if st.vecs[0] != 0 {
		n += vectorBytes(st.nvec, st.vecLog)
	}
	if _, ok := st.domains[logN]; ok {
		n += twiddleBytes(logN)
	}
	return n
}

// ReserveDriverMemory makes the memory limit (WithMemoryLimit) bound the
// device memory of the Backend's whole use of the GPU, the driver's own
// included: its modules' code and the local memory it keeps for the
// kernels (0.54 GiB measured this way on an H100), which the Backend's
// account does not hold. It runs the MSM kernels of both curves and the
// quotient's once on a few points (warm), measures
// the driver's part as the drop in free memory since New less what the
// Backend holds, and lowers the limit by it, so that key plans and memory
// checks keep the sum within the limit. It returns the driver's part.
// Without a limit it only measures. Call it once, before PlanKey, with
// nothing else on the Backend (the warm-up switches the quotient's mode);
// ReserveAgain measures again later. Each call sets the limit from
// WithMemoryLimit's; plans made before a later call keep their budget.
// Memory other processes took on the device since New counts as the
// driver's.
func (b *Backend) ReserveDriverMemory(ctx context.Context) (int64, error) {
	if err := b.warm(ctx); err != nil {
		return 0, fmt.Errorf("gpu: reserve the driver's memory: %w", err)
	}
	return b.ReserveAgain()
}

// ReserveAgain is ReserveDriverMemory without the warm-up: it measures the
// driver's part as it is now and sets the limit from WithMemoryLimit's.
// Call it once kernels the warm-up does not run have run (the fixed-base
// kernels of a development setup); unlike the warm-up it launches nothing
// and switches no quotient mode, so it is safe beside proofs in flight.
func (b *Backend) ReserveAgain() (int64, error) {
	var own int64
	err := b.dev.Do(func(c *driver.Ctx) error {
		free, _, err := c.MemInfo()
		if err != nil {
			return err
		}
		st := b.st
		own = max(0, st.free0-free-st.mem.held)
		limit := b.cfg.memLimit
		if limit == 0 {
			return nil
		}
		if own >= limit {
			return fmt.Errorf("%w: the driver holds %s of the limit %s", ErrDeviceMemory,
				stats.FormatGiB(own), stats.FormatGiB(limit))
		}
		st.mem.limit = limit - own
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("gpu: reserve the driver's memory: %w", err)
	}
	return own, nil
}

// warm runs the MSM kernels of both curves, in one pass and in streamed
// chunks (bucket fold, the window stage over the carry), and the quotient's,
// three-vector and lean, once on four points, so that the driver has loaded
// their modules and set aside the local memory of every kernel a proof may
// launch (a kernel first launched later may raise it), and drops the bases
// it made resident.
func (b *Backend) warm(ctx context.Context) error {
	_, _, gen1, gen2 := bls12381.Generators()
	g1 := []bls12381.G1Affine{gen1, gen1, gen1, gen1}
	g2 := []bls12381.G2Affine{gen2, gen2, gen2, gen2}
	s := make([]fr.Element, 4)
	for i := range s {
		s[i].SetUint64(uint64(i + 1))
	}
	if _, err := b.MSMG1(ctx, g1, s); err != nil {
		return err
	}
	if _, err := b.MSMG2(ctx, g2, s); err != nil {
		return err
	}
	if err := b.warmChunked(ctx, g1, g2, s); err != nil {
		return err
	}
	var was bool
	if err := b.dev.Do(func(*driver.Ctx) error { was = b.st.lean; return nil }); err != nil {
		return err
	}
	for _, lean := range []bool{false, true} {
		if err := b.dev.Do(func(*driver.Ctx) error { b.st.lean = lean; return nil }); err != nil {
			return err
		}
		if _, err := b.QuotientH(ctx, slices.Clone(s), slices.Clone(s), slices.Clone(s)); err != nil {
			return err
		}
	}
	if err := b.dev.Do(func(c *driver.Ctx) error { b.st.lean = was; return b.st.freeVectors(c) }); err != nil {
		return err
	}
	return b.EvictBasesOf([][]bls12381.G1Affine{g1}, [][]bls12381.G2Affine{g2})
}

// warmChunked runs an MSM over g1 and one over g2 with their bases
// streamed in two chunks.
func (b *Backend) warmChunked(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, s []fr.Element) error {
	m, err := b.msmEngine()
	if err != nil {
		return err
	}
	return b.do(ctx, func(c *driver.Ctx) error {
		st := m.st
		free, _, err := c.MemInfo()
		if err != nil {
			return err
		}
		j, err := st.prepareChunked(c, st.g1, g1, driver.Bytes(g1), len(g1), len(g1)/2, false, free)
		if err == nil {
			_, err = msmFinish(ctx, st, c, j, hostScalars(s), combineG1)
		}
		if err != nil {
			return fmt.Errorf("msm g1 in chunks: %w", err)
		}
		j, err = st.prepareChunked(c, st.g2, g2, driver.Bytes(g2), len(g2), len(g2)/2, false, free)
		if err == nil {
			_, err = msmFinish(ctx, st, c, j, hostScalars(s), combineG2)
		}
		if err != nil {
			return fmt.Errorf("msm g2 in chunks: %w", err)
		}
		return nil
	})
}
