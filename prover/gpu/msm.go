package gpu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// ErrMSMInput reports bases and scalars that cannot form an MSM (different
// lengths, none, or more points than the engine indexes).
var ErrMSMInput = errors.New("gpu msm: bad input")

// MSM computes BLS12-381 multi-scalar multiplications Σ k_i·P_i on one GPU
// with Pippenger's bucket method (see msm_plan.go for the pipeline). Results
// equal gnark-crypto's MultiExp as group elements.
//
// Bases stay resident: the first call with a bases slice uploads it and keeps
// it on the device, keyed by the address of its first element; later calls
// with the same slice, or a prefix of it, send only the scalars. The engine
// keeps a reference to each resident slice, so its memory is not reused while
// resident; its contents must not change (EvictBases drops them all).
//
// With a table budget (SetTableMemory), a newly resident set also gets a
// table of multiples (copy k holds 2^(s·k)·P_i, built on the device once),
// as many copies as the budget left allows, up to the number of windows:
// its MSMs fold the windows into shared buckets and take wider windows, so
// fewer additions per point (msm_plan.go, docs/perf-msm.md, "Tables of base
// multiples").
//
// All device work runs on the Device's locked OS thread through
// driver.Device.Do, so an MSM is safe for concurrent use: calls run one at a
// time. Each call reports its transfers and pipeline stages to the
// groth16.Trace in its context, with its MSMTimings in the Detail of the
// last stage, and stops between stages once its context is done.
type MSM struct {
	dev *driver.Device
	log *slog.Logger
	st  *msmState // touched only inside dev.Do
}

// MSMTimings are one MSM's transfer and device times (the stages measured
// with CUDA events) and its shape, as the MSM's last sub-phase
// (groth16.PhaseMSMWindow) carries them in groth16.PhaseInfo.Detail.
type MSMTimings struct {
	// Upload is the copy of the scalars to the device (host wall time):
	// through pinned staging chunks, or directly from pinned memory, and
	// by a device copy for scalars already there (MSMQuotientLH's h).
	// Where the upload was started early (MSMQuotientLH sends the private
	// wires during the quotient's last transforms), only the wait for its
	// end is counted.
	Upload time.Duration
	// Bases is the upload of the bases and the build of their table when
	// this MSM made them resident (host wall time); 0 when they were.
	Bases time.Duration
	// Compute is everything from the scalars on the device to the window
	// sums ready for the host; the four stages below add up to it.
	Compute time.Duration
	// Sort covers digits, segment offsets and the counting sort.
	Sort time.Duration
	// Accumulate is the mixed additions of points into bucket partials.
	Accumulate time.Duration
	// Reduce folds partials until each bucket is one point.
	Reduce time.Duration
	// Window weights the buckets and sums each window.
	Window time.Duration
	// Lead is, for a chunked MSM run on a Backend, the device's idle time
	// before its first stage by CUDA events: from the end of the device's
	// work before it (a quotient, an MSM) while the first chunk's bases
	// and scalars went up and the host went from call to call. 0 where
	// nothing ran before it.
	Lead time.Duration
	// Idle is, for a chunked MSM, the device's idle time between its
	// chunks (and between the vectors of a batch's chunk) by CUDA events:
	// from one sub-chunk's last stage to the next one's first, while the
	// host waited for the next scalars or bases to reach the device. Not
	// part of Compute.
	Idle time.Duration
	// Points is the MSM's size, Bits its window bits c, Copies the copies
	// of the bases table it read (1: the bases alone) and Windows its
	// bucket windows (the digit windows folded over the copies).
	Points, Bits, Copies, Windows int
	// Chunks is how many chunks the MSM ran in (1: one pass over its
	// points; msm_chunk.go), and StreamedBytes the bases it sent to the
	// device for this call because they are not resident (0 when they
	// are). Upload then includes the waits for the streamed bases that
	// the pipeline did not cover.
	Chunks        int
	StreamedBytes int64
	// FirstAhead says that a streamed MSM's first chunk of bases was on the
	// device when its call began, sent during the MSM before
	// (msm_first.go); StreamedBytes still counts it.
	FirstAhead bool
	// RingFound is how many of a streamed MSM's chunks of bases were on
	// the device when its call began, sent into idle device memory during
	// the MSM before; its chunks then ran from a ring of slots
	// (msm_ring.go). StreamedBytes still counts them.
	RingFound int
	// AheadBytes are the host scalars the call copied on the device from a
	// vector sent ahead that holds their memory, instead of uploading them
	// (MSMQuotientLH's private wires, from the A wires sent ahead).
	AheadBytes int64
	// Call is the groth16 phase of the call (groth16.ContextCall): which
	// of Prove's MSMs this is; MSMB's two are PhaseMSMB1 and PhaseMSMB2.
	Call groth16.Phase
}

// Events recorded on the default stream around each stage of an MSM.
const (
	evStart = iota // scalars on the device
	evSorted
	evAccumulated
	evReduced
	evDone
	numMSMEvents
)

// msmState is the engine's device-side state.
type msmState struct {
	sort     *msmSortKernels
	tables   *driver.Module // unit msm_table
	g1, g2   *msmCurve
	log      *slog.Logger
	resident map[uintptr]*residentBases
	// plans are the bases sets Backend.PlanKey planned in chunks or
	// streamed, by the address of their first point (basesKey).
	plans map[uintptr]*setRun
	// tableBudget is the device memory resident sets may hold in copies
	// beyond the bases (SetTableMemory), tableHeld what they hold.
	tableBudget, tableHeld int64
	mem                    *deviceMemory // the Backend's account, or the engine's own
	// beside, when not nil, runs beside each chunk of every MSM whose job
	// has no beside of its own (msmJob.beside): the Backend's, which sends
	// the next quotient's first vector ahead (Backend.PrefetchQuotient).
	beside func(c *driver.Ctx, stage *stager, j *msmJob, i, chunks int) error
	// end, when not nil, is the Backend's mark of the device's last work,
	// which every MSM moves to its own end (a chunked MSM's lead counts
	// from it).
	end *workEnd
	// first is the first chunk of the next streamed MSM, sent during the
	// last chunk of the one before (msm_first.go).
	first firstState
	// ring holds the chunks of the next streamed MSM sent into room, and
	// the copy stream of a ring of chunk slots (msm_ring.go). room, when
	// not nil, returns the Backend's device memory idle until its work
	// vectors are next written (Backend.ringRoom).
	ring ringState
	room func(*driver.Ctx) deviceSpan
	// keptPairs counts the B pairs whose G2 MSM read the scalars its G1
	// MSM's chunks kept (sumG1G2; tests).
	keptPairs int
	arena     driver.DevicePtr
	arenaLen  uint64
	ev        [numMSMEvents]*driver.Event
	evNext    [numMSMEvents]*driver.Event // a chunked MSM's second set (msmChunkedBatch)
	window    uint32                      // forced window bits (benchmarks); 0: by the cost model
	stage     *stager
	maxv      *driver.HostBuf // pinned: a sort's band maxima (msmRun.maxv)
	device    string          // the device's name in phase reports
}

// residentBases is a bases slice kept on the device.
type residentBases struct {
	host  any // the uploaded slice: keeps its memory (and address) alive
	n     int
	ptr   driver.DevicePtr
	first []byte // bytes of the first point, checked on reuse
	curve *msmCurve
	table msmTable // ptr holds table.copies copies of n points
}

// NewMSM loads the MSM kernels on dev (kernel units msm_sort, msm_g1,
// msm_g2). log receives debug records of uploads and plans; nil discards
// them. The MSM does not own dev; Close releases only its own resources.
func NewMSM(dev *driver.Device, log *slog.Logger) (*MSM, error) {
	return newMSM(dev, log, &deviceMemory{})
}

// newMSM is NewMSM counting the engine's device memory in mem (a Backend's
// account, shared with its NTT state).
func newMSM(dev *driver.Device, log *slog.Logger, mem *deviceMemory) (*MSM, error) {
	if dev == nil {
		return nil, fmt.Errorf("gpu msm: nil device")
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m := &MSM{dev: dev, log: log, st: &msmState{log: log, resident: map[uintptr]*residentBases{}, mem: mem,
		plans: map[uintptr]*setRun{}, device: deviceName(dev.Info().Ordinal)}}
	err := dev.Do(func(c *driver.Ctx) error { return m.st.load(c) })
	if err != nil {
		_ = m.Close() // the load error is the one to report
		return nil, fmt.Errorf("gpu msm on %s: %w", dev.Info(), err)
	}
	return m, nil
}

func (st *msmState) load(c *driver.Ctx) error {
	var err error
	if st.sort, err = loadMSMSortKernels(c); err != nil {
		return err
	}
	if st.tables, err = loadMSMTables(c); err != nil {
		return err
	}
	if st.g1, err = loadMSMCurve(c, "g1", st.tables, int(unsafe.Sizeof(bls12381.G1Affine{})), int(unsafe.Sizeof(g1XYZZ{}))); err != nil {
		return err
	}
	if st.g2, err = loadMSMCurve(c, "g2", st.tables, int(unsafe.Sizeof(bls12381.G2Affine{})), int(unsafe.Sizeof(g2XYZZ{}))); err != nil {
		return err
	}
	for _, set := range []*[numMSMEvents]*driver.Event{&st.ev, &st.evNext} {
		for i := range set {
			if set[i], err = c.NewEvent(); err != nil {
				return fmt.Errorf("msm events: %w", err)
			}
		}
	}
	if st.maxv, err = c.HostAlloc(msmMaximaBytes); err != nil {
		return fmt.Errorf("msm band maxima: %w", err)
	}
	st.stage, err = newStager(c, msmStagingChunk)
	return err
}

// msmMaximaBytes holds the band maxima of any plan: at most msmBands bands
// a bucket window (one a bucket below that), and fewer than 256 windows.
const msmMaximaBytes = 4 * msmBands * 256

// msmStagingChunk is the size of each of the two pinned chunks the scalars
// go through.
const msmStagingChunk = 32 << 20

// G1 returns Σ scalars[i]·bases[i] in G1.
func (m *MSM) G1(ctx context.Context, bases []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	return m.g1(ctx, bases, scalars, hostScalars)
}

// g1 is G1 with the scalars placed by where, on the device thread.
func (m *MSM) g1(ctx context.Context, bases []bls12381.G1Affine, scalars []fr.Element, where func([]fr.Element) msmScalars) (
	res bls12381.G1Jac, err error) {
	err = m.call(ctx, "g1", len(scalars), checkMSMInput(len(bases), len(scalars)), func(dc *driver.Ctx) (err error) {
		res, err = m.st.sumG1(ctx, dc, bases, where(scalars))
		return err
	})
	return res, err
}

// G2 returns Σ scalars[i]·bases[i] in G2.
func (m *MSM) G2(ctx context.Context, bases []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	return m.g2(ctx, bases, scalars, hostScalars)
}

// g2 is G2 with the scalars placed by where, on the device thread.
func (m *MSM) g2(ctx context.Context, bases []bls12381.G2Affine, scalars []fr.Element, where func([]fr.Element) msmScalars) (
	res bls12381.G2Jac, err error) {
	err = m.call(ctx, "g2", len(scalars), checkMSMInput(len(bases), len(scalars)), func(dc *driver.Ctx) (err error) {
		res, err = m.st.sumG2(ctx, dc, bases, where(scalars))
		return err
	})
	return res, err
}

// G1G2 returns Σ scalars[i]·g1[i] in G1 and Σ scalars[i]·g2[i] in G2
// (Groth16's two MSMs over the B wires), sending the scalars once and, when
// both MSMs take the same window and table shape, sorting their digits once.
// It reports the two MSMs as groth16.PhaseMSMB1 and PhaseMSMB2; the G2
// MSM's upload is only a wait, and its sort is empty where it used the G1
// MSM's.
func (m *MSM) G1G2(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, scalars []fr.Element) (
	bls12381.G1Jac, bls12381.G2Jac, error) {
	return m.g1g2(ctx, g1, g2, scalars, hostScalars, nil)
}

// g1g2 is G1G2 with the scalars placed by where, on the device thread;
// keep, when not nil, gives device memory idle during the call where the
// G1 MSM's chunks may leave a copy of their scalars for the G2 MSM
// (sumG1G2).
func (m *MSM) g1g2(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, scalars []fr.Element,
	where func([]fr.Element) msmScalars, keep func(*driver.Ctx) deviceSpan) (r1 bls12381.G1Jac, r2 bls12381.G2Jac, err error) {
	bad := errors.Join(checkMSMInput(len(g1), len(scalars)), checkMSMInput(len(g2), len(scalars)))
	err = m.call(ctx, "g1 and g2", len(scalars), bad, func(dc *driver.Ctx) (err error) {
		var room deviceSpan
		if keep != nil {
			room = keep(dc)
		}
		r1, r2, err = m.st.sumG1G2(ctx, dc, g1, g2, where(scalars), room)
		return err
	})
	return r1, r2, err
}

// call runs fn, an MSM of n points named what, on the device thread, unless
// its input check failed (bad); errors name the MSM.
func (m *MSM) call(ctx context.Context, what string, n int, bad error, fn func(*driver.Ctx) error) error {
	if bad != nil {
		return fmt.Errorf("msm %s: %w", what, bad)
	}
	if err := m.do(ctx, fn); err != nil {
		return fmt.Errorf("msm %s (%d points): %w", what, n, err)
	}
	return nil
}

// sumG1G2 runs G1G2 on the device thread. The scalars are the first buffer
// of the arena for every plan, and a plan's sort buffers come before its
// curve-sized ones, so after the G1 MSM the G2 MSM finds the scalars, and
// with an equal sortKey the sorted entries, where its own layout puts them.
//
// Where the MSMs run in chunks, each sends its own scalars, unless keep
// (device memory idle during the call) holds them: the G1 MSM's chunks then
// copy theirs there on the device as they arrive (msmJob.keep), and the G2
// MSM reads them from there, so that the scalars cross the link once, not
// twice (1.2 GB a C2 partition).
func (st *msmState) sumG1G2(ctx context.Context, c *driver.Ctx, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, scalars msmScalars,
	keep deviceSpan) (r1 bls12381.G1Jac, r2 bls12381.G2Jac, err error) {
	j2, err := st.prepare(c, st.g2, g2, driver.Bytes(g2), scalars.n())
	if err != nil {
		return r1, r2, err
	}
	j1, err := st.prepare(c, st.g1, g1, driver.Bytes(g1), scalars.n())
	if err != nil {
		return r1, r2, err
	}
	// Preparing j1 may have grown the arena: place j2 in the new one.
	j2.b, _ = j2.p.layout(st.arena, j2.cv.xyzzBytes)
	kept := j1.chunked() && scalars.hostOnly() && keep.n >= scalars.n()*elemBytes
	if kept {
		j1.keep = keep.ptr
	}
	if r1, err = msmFinish(groth16.WithCall(ctx, groth16.PhaseMSMB1), st, c, j1, scalars, combineG1); err != nil {
		return r1, r2, err
	}
	g2Scalars := msmScalars{queued: true}
	if j1.chunked() || j2.chunked() {
		// Chunks share no sort, and hold no whole scalar vector for the
		// second MSM: it sends its own, placed where j1's run left the arena,
		// or copies those j1's chunks kept.
		g2Scalars = scalars
		if kept {
			g2Scalars = msmScalars{dev: keep.ptr, ndev: scalars.n()}
			st.keptPairs++
		}
		if j2, err = st.prepare(c, st.g2, g2, driver.Bytes(g2), scalars.n()); err != nil {
			return r1, r2, err
		}
	} else if j1.p.sortKey() == j2.p.sortKey() {
		j2.maxima = j1.maxima
	}
	if r2, err = msmFinish(groth16.WithCall(ctx, groth16.PhaseMSMB2), st, c, j2, g2Scalars, combineG2); err != nil {
		return r1, r2, err
	}
	return r1, r2, nil
}

// sumG1 runs a G1 MSM on the device thread.
func (st *msmState) sumG1(ctx context.Context, c *driver.Ctx, bases []bls12381.G1Affine, scalars msmScalars) (bls12381.G1Jac, error) {
	return msmSum(ctx, st, c, st.g1, bases, scalars, combineG1)
}

// sumG2 runs a G2 MSM on the device thread.
func (st *msmState) sumG2(ctx context.Context, c *driver.Ctx, bases []bls12381.G2Affine, scalars msmScalars) (bls12381.G2Jac, error) {
	return msmSum(ctx, st, c, st.g2, bases, scalars, combineG2)
}

// msmSum runs an MSM of curve cv and combines its window sums (XYZZ points
// W) into the result.
func msmSum[P, W, R any](ctx context.Context, st *msmState, c *driver.Ctx, cv *msmCurve, bases []P, scalars msmScalars,
	combine func([]W, uint32) R) (R, error) {
	j, err := st.prepare(c, cv, bases, driver.Bytes(bases), scalars.n())
	if err != nil {
		var zero R
		return zero, err
	}
	return msmFinish(ctx, st, c, j, scalars, combine)
}

// msmFinish runs the prepared MSM j on scalars and combines its window
// sums. For a chunked j, queued scalars mean the host part of its first
// chunk only (msmChunked).
func msmFinish[W, R any](ctx context.Context, st *msmState, c *driver.Ctx, j *msmJob, scalars msmScalars,
	combine func([]W, uint32) R) (R, error) {
	if j.chunked() {
		return msmChunked(ctx, st, c, j, scalars, combine)
	}
	wins := make([]W, 0, 256)
	bits, err := st.run(ctx, c, j, scalars, func(nwin uint32) []byte {
		wins = wins[:nwin]
		return driver.Bytes(wins)
	})
	if err != nil {
		var zero R
		return zero, err
	}
	return combine(wins, bits), nil
}

func checkMSMInput(nb, ns int) error {
	if nb != ns {
		return fmt.Errorf("%w: %d bases, %d scalars", ErrMSMInput, nb, ns)
	}
	if nb == 0 || nb > msmMaxPoints {
		return fmt.Errorf("%w: %d points, want 1 … %d", ErrMSMInput, nb, msmMaxPoints)
	}
	return nil
}

// do runs fn on the device thread unless ctx is already done.
func (m *MSM) do(ctx context.Context, fn func(*driver.Ctx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return m.dev.Do(fn)
}

// interrupted returns nil while ctx is live. Once ctx is done it waits for
// the work already queued on the device (kernels, and copies that read or
// write the caller's host memory), so that nothing of the abandoned call is
// left in flight, and returns an error wrapping ctx.Err() that names the
// step about to start. It runs on the device thread; the state the call
// leaves behind is then as after a failed call: reusable.
func interrupted(ctx context.Context, c *driver.Ctx, step string) error {
	err := ctx.Err()
	if err == nil {
		return nil
	}
	return errors.Join(fmt.Errorf("%s: %w", step, err), c.Synchronize())
}

// setWindow forces the window bits of later MSMs (0: the cost model's
// choice); benchmarks use it to check the model.
func (m *MSM) setWindow(c uint32) error {
	if _, err := newMSMTable(1, msmMaxCopies, c); err != nil {
		return err
	}
	return m.dev.Do(func(*driver.Ctx) error { m.st.window = c; return nil })
}

// SetTableMemory sets the device memory, in bytes, that resident bases sets
// uploaded from now on may take for their tables of multiples, beyond the
// bases themselves and summed over all sets (default 0: no tables). Sets
// already resident keep their shape; EvictBases frees the tables too. A set
// of n points takes up to msmMaxCopies−1 extra copies of n points each
// (MSMBytes gives the figures), fewer where the budget left or the free
// device memory holds fewer: an MSM is refused for memory only when its
// bases alone do not fit.
func (m *MSM) SetTableMemory(bytes int64) error {
	if bytes < 0 {
		return fmt.Errorf("gpu msm: table memory %d bytes: must not be negative", bytes)
	}
	return m.dev.Do(func(*driver.Ctx) error { m.st.tableBudget = bytes; return nil })
}

// PlanG1 makes the MSMs over bases (and its prefixes) run in chunks of
// chunk points (msm_chunk.go): over the bases resident on the device, or,
// with resident false, over bases streamed from host memory for every
// call, page-locked where the host allows. EvictBases ends it.
// Backend.PlanKey plans a whole key this way within a memory budget; this
// is the same for one set (benchmarks, tests).
func (m *MSM) PlanG1(bases []bls12381.G1Affine, chunk int, resident bool) error {
	if len(bases) == 0 || chunk < 1 {
		return fmt.Errorf("gpu msm: plan %d points in chunks of %d: %w", len(bases), chunk, ErrMSMInput)
	}
	return m.dev.Do(func(c *driver.Ctx) error {
		st, raw := m.st, driver.Bytes(bases)
		if err := st.dropPlan(c, basesKey(raw)); err != nil {
			return err
		}
		run := &setRun{curve: st.g1, points: len(bases), chunk: chunk, resident: resident, host: bases}
		if !resident {
			if _, ok := st.resident[basesKey(raw)]; ok {
				if err := st.free(c, basesKey(raw)); err != nil {
					return err
				}
			}
			run.pin = pinForStreaming(c, st.log, raw)
		}
		st.plans[basesKey(raw)] = run
		return nil
	})
}

// EvictBases frees every resident bases set and forgets every plan
// (PlanG1, Backend.PlanKey); later calls upload again.
func (m *MSM) EvictBases() error {
	return m.dev.Do(func(c *driver.Ctx) error { return m.st.evict(c) })
}

func (st *msmState) evict(c *driver.Ctx) error {
	errs := []error{st.dropPlans(c)}
	for k := range st.resident {
		errs = append(errs, st.free(c, k))
	}
	return errors.Join(errs...)
}

// Close frees the engine's device memory, events and modules. The MSM must
// not be used afterwards.
func (m *MSM) Close() error {
	return m.dev.Do(func(c *driver.Ctx) error {
		st := m.st
		errs := []error{st.ringClose(c), st.evict(c), c.Free(st.arena)}
		st.mem.add(-int64(st.arenaLen))
		if st.stage != nil {
			errs = append(errs, st.stage.free(c))
		}
		if st.maxv != nil {
			errs = append(errs, c.HostFree(st.maxv))
		}
		for _, e := range append(st.ev[:], st.evNext[:]...) {
			if e != nil {
				errs = append(errs, c.DestroyEvent(e))
			}
		}
		for _, cv := range []*msmCurve{st.g1, st.g2} {
			if cv != nil {
				errs = append(errs, c.Unload(cv.mod))
			}
		}
		if st.sort != nil {
			errs = append(errs, c.Unload(st.sort.mod))
		}
		if st.tables != nil {
			errs = append(errs, c.Unload(st.tables))
		}
		*st = msmState{log: st.log, resident: map[uintptr]*residentBases{}, plans: map[uintptr]*setRun{}, mem: st.mem}
		return errors.Join(errs...)
	})
}

// G1Batch returns Σ scalars[v][i]·bases[i] in G1 for each vector v, in
// one call: where the bases stream (PlanG1), each chunk of them goes up
// once for all the vectors. The carries of the vectors beyond the first
// take device memory of their own for the call; where it cannot be had the
// vectors run one after another.
func (m *MSM) G1Batch(ctx context.Context, bases []bls12381.G1Affine, scalars [][]fr.Element) ([]bls12381.G1Jac, error) {
	return m.g1Batch(ctx, bases, scalars, nil)
}

// g1Batch is G1 over several scalar vectors of the same length at once
// (msmChunkedBatch): where the bases stream, each chunk of them goes up once
// for all the vectors. spare, called on the device thread, gives device
// memory idle during the call for the carries beyond the first; where it is
// short, or the MSM runs in one pass over resident bases, the vectors run
// one after another.
func (m *MSM) g1Batch(ctx context.Context, bases []bls12381.G1Affine, scalars [][]fr.Element, spare func(*driver.Ctx) deviceSpan) (
	res []bls12381.G1Jac, err error) {
	err = m.call(ctx, "g1 batch", len(bases), checkBatchInput(len(bases), scalars), func(dc *driver.Ctx) (err error) {
		prep := func() (*msmJob, error) { return m.st.prepare(dc, m.st.g1, bases, driver.Bytes(bases), len(scalars[0])) }
		j, err := prep()
		if err != nil {
			return err
		}
		res, err = msmBatch(ctx, m.st, dc, j, scalars, spare, combineG1, prep)
		return err
	})
	return res, err
}

// g1g2Batch is G1G2 over several scalar vectors at once: the G1 MSMs as a
// batch (g1Batch), then the G2 MSMs as a batch. Each vector's scalars go up
// once for each curve (a batch shares no sort).
func (m *MSM) g1g2Batch(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, scalars [][]fr.Element,
	spare func(*driver.Ctx) deviceSpan) (r1 []bls12381.G1Jac, r2 []bls12381.G2Jac, err error) {
	bad := errors.Join(checkBatchInput(len(g1), scalars), checkBatchInput(len(g2), scalars))
	err = m.call(ctx, "g1 and g2 batch", len(g1), bad, func(dc *driver.Ctx) error {
		n := len(scalars[0])
		prep1 := func() (*msmJob, error) { return m.st.prepare(dc, m.st.g1, g1, driver.Bytes(g1), n) }
		prep2 := func() (*msmJob, error) { return m.st.prepare(dc, m.st.g2, g2, driver.Bytes(g2), n) }
		j1, err := prep1()
		if err != nil {
			return err
		}
		if r1, err = msmBatch(groth16.WithCall(ctx, groth16.PhaseMSMB1), m.st, dc, j1, scalars, spare, combineG1, prep1); err != nil {
			return err
		}
		j2, err := prep2()
		if err != nil {
			return err
		}
		r2, err = msmBatch(groth16.WithCall(ctx, groth16.PhaseMSMB2), m.st, dc, j2, scalars, spare, combineG2, prep2)
		return err
	})
	return r1, r2, err
}

// msmBatch runs the prepared job j over each vector of scalars: as one
// chunked batch where j is chunked and the carries find room, else one
// vector after another, preparing the job again (prep) before each but the
// first, as a run may leave its buffers to the next.
func msmBatch[W, R any](ctx context.Context, st *msmState, c *driver.Ctx, j *msmJob, scalars [][]fr.Element,
	spare func(*driver.Ctx) deviceSpan, combine func([]W, uint32) R, prep func() (*msmJob, error)) ([]R, error) {
	if j.chunked() && len(scalars) > 1 {
		vecs := make([]msmScalars, len(scalars))
		for i, s := range scalars {
			vecs[i] = hostScalars(s)
		}
		var room deviceSpan
		if spare != nil {
			room = spare(c)
		} else {
			// The engine alone (MSM.G1Batch): room of its own for the call.
			// One chunk needs no carry, hence no room.
			need := (len(vecs) - 1) * int(carryBytes(j.p, j.cv.xyzzBytes, len(chunkRanges(j.n, j.chunk))))
			if need > 0 {
				if ptr, err := c.Alloc(need); err == nil {
					st.mem.add(int64(need))
					defer func() {
						if err := c.Free(ptr); err != nil {
							st.log.Warn("msm batch: free the carries' room", "err", err)
						}
						st.mem.add(-int64(need))
					}()
					room = deviceSpan{ptr: ptr, n: need}
				}
			}
		}
		out, err := msmChunkedBatch(ctx, st, c, j, vecs, room, combine)
		if !errors.Is(err, ErrBatchRoom) {
			return out, err
		}
		st.log.Info("msm batch: vectors one at a time", "reason", err)
	}
	out := make([]R, len(scalars))
	for i, s := range scalars {
		if i > 0 {
			var err error
			if j, err = prep(); err != nil {
				return nil, err
			}
		}
		var err error
		if out[i], err = msmFinish(ctx, st, c, j, hostScalars(s), combine); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkBatchInput checks a batch's vectors against nb bases: at least one,
// all of the bases' length.
func checkBatchInput(nb int, scalars [][]fr.Element) error {
	if len(scalars) == 0 {
		return errors.New("a batch of no scalar vectors")
	}
	for _, s := range scalars {
		if err := checkMSMInput(nb, len(s)); err != nil {
			return err
		}
	}
	return nil
}
