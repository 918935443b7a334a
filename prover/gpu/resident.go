package gpu

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// EvictBasesOf frees the resident bases sets that start at the given
// slices (as groth16.ProvingKey.Bases lists them), leaving every other set
// resident. Slices that are not resident are ignored. It is safe to call
// while other keys' MSMs run: device work is serialized on the device.
func (b *Backend) EvictBasesOf(g1 [][]bls12381.G1Affine, g2 [][]bls12381.G2Affine) error {
	b.msmMu.Lock()
	m := b.msm
	b.msmMu.Unlock()
	if m == nil {
		return nil // no MSM has run: nothing is resident
	}
	var keys []uintptr
	for _, s := range g1 {
		if len(s) > 0 {
			keys = append(keys, uintptr(unsafe.Pointer(unsafe.SliceData(s))))
		}
	}
	for _, s := range g2 {
		if len(s) > 0 {
			keys = append(keys, uintptr(unsafe.Pointer(unsafe.SliceData(s))))
		}
	}
	return m.dev.Do(func(c *driver.Ctx) error {
		for _, k := range keys {
			if err := m.st.dropPlan(c, k); err != nil {
				return err
			}
			if _, ok := m.st.resident[k]; ok {
				if err := m.st.free(c, k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// setRun is how the MSM engine runs a bases set Backend.PlanKey planned in
// chunks or streamed.
type setRun struct {
	curve    *msmCurve
	points   int
	chunk    int
	resident bool
	host     any             // the planned slice: keeps its memory (and address) alive
	pin      *driver.HostBuf // the streamed set's page-locked host memory, if it could be locked
}

// dropPlan forgets the plan of the set at key and unpins its host memory.
func (st *msmState) dropPlan(c *driver.Ctx, key uintptr) error {
	r, ok := st.plans[key]
	if !ok {
		return nil
	}
	if err := st.forgetFirst(c, key); err != nil {
		return err
	}
	delete(st.plans, key)
	if r.pin != nil {
		return c.HostUnregister(r.pin)
	}
	return nil
}

// dropPlans forgets every plan.
func (st *msmState) dropPlans(c *driver.Ctx) error {
	var errs []error
	for k := range st.plans {
		errs = append(errs, st.dropPlan(c, k))
	}
	return errors.Join(errs...)
}

// PlanKey plans how a proving key's bases sets (as groth16.ProvingKey.Bases
// lists them) use this GPU's memory beside the working memory of its
// proofs, whose quotient runs over 2^logN points (KeyPlan says how): within
// the Backend's memory limit, or the free memory with what the Backend
// holds, less what other keys hold resident. Sets the plan streams are
// page-locked where the host allows it, so that their chunks go up by DMA
// beside the MSM pipeline (a warning is logged where not: they then go
// through the staging chunks). The MSMs over the key's sets follow the
// plan from then on, until EvictBasesOf; the resident sets upload on their
// first MSM. The plan also says whether the quotient keeps two work vectors
// (KeyPlan.Lean); the Backend's quotients follow the latest plan. A key
// that fits whole leaves no plan behind: nothing changes.
func (b *Backend) PlanKey(g1 [][]bls12381.G1Affine, g2 [][]bls12381.G2Affine, logN uint32) (KeyPlan, error) {
	m, err := b.msmEngine()
	if err != nil {
		return KeyPlan{}, err
	}
	type set struct {
		shape setShape
		raw   []byte
		host  any
	}
	var sets []set
	for _, s := range g1 {
		if len(s) > 0 {
			sets = append(sets, set{setShape{false, len(s)}, driver.Bytes(s), s})
		}
	}
	for _, s := range g2 {
		if len(s) > 0 {
			sets = append(sets, set{setShape{true, len(s)}, driver.Bytes(s), s})
		}
	}
	var kp KeyPlan
	err = b.dev.Do(func(c *driver.Ctx) error {
		st := m.st
		free, _, err := c.MemInfo()
		if err != nil {
			return err
		}
		// What the plan may use: what the Backend may hold, less what it
		// holds that the plan does not count (other keys' resident sets,
		// other sizes' transform tables); the quotient's vectors and
		// tables, the arena and this key's resident sets are counted by
		// the plan.
		budget := st.mem.held + free - fitHeadroom
		if st.mem.limit > 0 {
			budget = min(budget, st.mem.limit)
		}
		other := st.mem.held - int64(st.arenaLen) - b.st.quotientHeld(logN)
		shapes := make([]setShape, len(sets))
		for i, s := range sets {
			shapes[i] = s.shape
			if r, ok := st.resident[basesKey(s.raw)]; ok {
				other -= r.bytes()
			}
		}
		arena := func(g2 bool, points, chunk int) int64 {
			cv := st.g1
			if g2 {
				cv = st.g2
			}
			// As chunkShape plans a chunk; a whole set may also run in one
			// pass (st.shape, msmCostBucket): the larger of the two then.
			costs := []float64{cv.chunkBucketCost}
			if chunk >= points {
				costs = append(costs, msmCostBucket)
			}
			var most int64
			for _, cost := range costs {
				p, err := newMSMPlanWeighted(chunk, msmTable{copies: 1, stride: uint32(chunk)}, st.window, cv.bucketWave, cost)
				if err != nil {
					return math.MaxInt64 / 4
				}
				_, a := p.layout(0, cv.xyzzBytes)
				most = max(most, int64(a+carryBytes(p, cv.xyzzBytes, len(chunkRanges(points, chunk)))))
			}
			return most
		}
		if kp, err = planKey(shapes, quotientNeedOf(logN), budget-max(0, other), arena); err != nil {
			return err
		}
		// A lean quotient frees its third vector now, for the room the
		// plan gives the MSMs.
		b.st.lean = kp.Lean
		if kp.Lean && b.st.nvec == 3 {
			if err := errors.Join(b.st.settleAhead(c), b.st.freeVectors(c)); err != nil {
				return err
			}
		}
		for i, s := range sets {
			key := basesKey(s.raw)
			if err := st.dropPlan(c, key); err != nil {
				return err
			}
			sp := kp.Sets[i]
			if kp.Whole() {
				continue
			}
			cv := st.g1
			if s.shape.g2 {
				cv = st.g2
			}
			run := &setRun{curve: cv, points: sp.Points, chunk: sp.Chunk, resident: sp.Resident, host: s.host}
			if !sp.Resident {
				if r, ok := st.resident[key]; ok && r.serves(cv, s.raw) {
					if err := st.free(c, key); err != nil {
						return err
					}
				}
				run.pin = pinForStreaming(c, st.log, s.raw)
			}
			st.plans[key] = run
		}
		return nil
	})
	if err != nil {
		return KeyPlan{}, fmt.Errorf("gpu: plan a key of %d bases sets: %w", len(sets), err)
	}
	b.cfg.logger.Info("key plan", slog.String("device", b.st.device), slog.String("plan", kp.String()))
	return kp, nil
}

// pinForStreaming page-locks a streamed set's host bytes (read-only where
// a plain registration is refused, as for a key file mapped read-only); it
// returns nil, having logged why, where neither works.
func pinForStreaming(c *driver.Ctx, log *slog.Logger, raw []byte) *driver.HostBuf {
	h, err := c.HostRegister(raw)
	if err == nil {
		return h
	}
	h, errRO := c.HostRegisterReadOnly(raw)
	if errRO == nil {
		return h
	}
	log.Warn("streamed bases not page-locked: their chunks go through the staging buffers, beside no MSM",
		slog.Int("bytes", len(raw)), slog.String("err", errors.Join(err, errRO).Error()))
	return nil
}
