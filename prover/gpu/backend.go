package gpu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// Backend implements prover/groth16's Backend on one GPU. All device work
// runs on the Device's own locked OS thread (driver.Device.Do), so a Backend
// is safe for concurrent use: calls are served one at a time, in order.
// Inside one QuotientH call, uploads go through pinned chunks on a copy
// stream while the transforms of the previous vector run on a compute
// stream. Device memory (see the table in memory.go) is checked before it is
// allocated and kept for reuse until Close. Every call reports its
// sub-phases (uploads, transforms, MSM stages, downloads), and its record
// of each MSM and quotient (MSMTimings, QuotientTimings, in the Detail of
// their last sub-phase), to the groth16.Trace in its own context
// (groth16.WithTrace), so that reports stay right when calls overlap, and
// stops between kernels and stages once its context is done, waiting for
// what it queued (the Backend stays usable).
type Backend struct {
	dev *driver.Device
	cfg config
	st  *state // touched only inside dev.Do

	msmMu sync.Mutex
	msm   *MSM // the MSM engine, loaded on the first MSM call
}

// state is the Backend's device-side state.
type state struct {
	k       *nttKernels
	compute *driver.Stream
	stage   *stager
	qev     [2]*driver.Event // the quotient's device span: before a's upload, after the last transform
	end     workEnd          // the end of the device's last quotient or MSM (an MSM's lead counts from it)
	domains map[uint32]*domain
	vecs    [3]driver.DevicePtr       // vecs[2] is 0 while the quotient is lean (two work vectors)
	vecLog  uint32                    // the vectors hold 2^vecLog elements each (when vecs[0] != 0)
	nvec    int                       // the work vectors allocated: 3, 2 (lean), 0 (none)
	lean    bool                      // the key plan (PlanKey) asks for two work vectors, not three
	mem     *deviceMemory             // device bytes held by domains, vectors and the MSM engine
	host    map[*byte]*driver.HostBuf // AllocHost's buffers, by first byte
	// registered holds PinHost's registrations, by first byte
	registered map[*byte]*driver.HostBuf
	device     string            // the device's name in phase reports
	want       [][]fr.Element    // vectors announced by Prefetch, not yet sent
	wantReady  <-chan struct{}   // closed once want's vectors hold their values (nil: already)
	ahead      []aheadVec        // vectors sent ahead into the work vectors, not yet used
	sending    []aheadSend       // vectors chosen to go ahead, not all of them queued yet
	quot       quotientAhead     // the next quotient's first vector, sent ahead (PrefetchQuotient)
	vecGen     uint64            // counts the work vectors' allocations: a vector sent ahead names the one it went to
	aheadOn    *stager           // the stager whose stream carried them, until settled
	fb         *fixedBaseKernels // the fixed-base kernels, loaded on the first FixedBaseG1/G2
	// ringDrop, once the MSM engine is loaded, drops the chunks it sent
	// ahead into work vector 1 (Backend.ringRoom) and waits for their
	// copies: settleAhead calls it before the work vectors are written.
	ringDrop func(*driver.Ctx) error
	// free0 is the device's free memory when New began, before the
	// Backend loaded anything (ReserveDriverMemory).
	free0 int64
}

// New returns a Backend on dev, configured by opts: it loads the NTT kernels
// and sets up the streams and pinned staging memory. The Backend does not
// own dev; Close releases only the Backend's resources.
func New(dev *driver.Device, opts ...Option) (*Backend, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if dev == nil {
		return nil, fmt.Errorf("gpu: nil device")
	}
	b := &Backend{dev: dev, cfg: cfg, st: &state{domains: make(map[uint32]*domain), device: deviceName(dev.Info().Ordinal),
		mem: &deviceMemory{limit: cfg.memLimit}, host: make(map[*byte]*driver.HostBuf), registered: make(map[*byte]*driver.HostBuf)}}
	err := dev.Do(func(c *driver.Ctx) error {
		var err error
		if b.st.free0, _, err = c.MemInfo(); err != nil {
			return err
		}
		if b.st.k, err = loadNTTKernels(c); err != nil {
			return err
		}
		if b.st.compute, err = c.NewStream(); err != nil {
			return fmt.Errorf("compute stream: %w", err)
		}
		if b.st.stage, err = newStager(c, cfg.chunk); err != nil {
			return err
		}
		for i := range b.st.qev {
			if b.st.qev[i], err = c.NewEvent(); err != nil {
				return fmt.Errorf("quotient events: %w", err)
			}
		}
		if b.st.end.ev, err = c.NewEvent(); err != nil {
			return fmt.Errorf("work end event: %w", err)
		}
		return nil
	})
	if err != nil {
		_ = b.Close() // the setup error is the one to report
		return nil, fmt.Errorf("gpu backend on %s: %w", dev.Info(), err)
	}
	cfg.logger.Debug("gpu backend ready", slog.String("device", dev.Info().String()))
	return b, nil
}

// Close releases the Backend's device memory, streams, pinned memory (the
// staging chunks and what AllocHost returned) and MSM engine. The Backend
// must not be used afterwards.
func (b *Backend) Close() error {
	// Prefetched uploads into the work vectors finish before their stream
	// and the vectors go.
	settleErr := b.dev.Do(func(c *driver.Ctx) error { return b.st.settleAhead(c) })
	var msmErr error
	b.msmMu.Lock()
	if b.msm != nil {
		msmErr = b.msm.Close()
		b.msm = nil
	}
	b.msmMu.Unlock()
	return errors.Join(settleErr, msmErr, b.closeNTT())
}

func (b *Backend) closeNTT() error {
	return b.dev.Do(func(c *driver.Ctx) error {
		st := b.st
		var errs []error
		for _, d := range st.domains {
			errs = append(errs, d.free(c))
		}
		errs = append(errs, st.freeVectors(c), st.freeHost(c), st.unpinHost(c))
		if st.stage != nil {
			errs = append(errs, st.stage.free(c))
		}
		for _, e := range append(st.qev[:], st.end.ev) {
			if e != nil {
				errs = append(errs, c.DestroyEvent(e))
			}
		}
		if st.compute != nil {
			errs = append(errs, c.DestroyStream(st.compute))
		}
		if st.k != nil {
			errs = append(errs, c.Unload(st.k.mod))
		}
		errs = append(errs, st.fb.free(c))
		*st = state{domains: map[uint32]*domain{}, host: map[*byte]*driver.HostBuf{}, registered: map[*byte]*driver.HostBuf{},
			device: st.device}
		return errors.Join(errs...)
	})
}

// domainOf returns the resident domain of size 2^logN, building it (after
// the memory check) on first use.
func (b *Backend) domainOf(c *driver.Ctx, logN uint32, vectors int64) (*domain, error) {
	st := b.st
	d, ok := st.domains[logN]
	extra := vectors
	if !ok {
		extra += twiddleBytes(logN)
	}
	free, _, err := c.MemInfo()
	if err != nil {
		return nil, err
	}
	if err := st.mem.fits(extra, free); err != nil {
		return nil, fmt.Errorf("size 2^%d: %w", logN, err)
	}
	if ok {
		return d, nil
	}
	if d, err = st.k.newDomain(c, st.compute, logN); err != nil {
		return nil, err
	}
	st.domains[logN] = d
	st.mem.add(twiddleBytes(logN))
	b.cfg.logger.Debug("ntt domain resident", slog.Int("log_n", int(logN)), slog.Int64("held_bytes", st.mem.held))
	return d, nil
}

// holdsVectors reports whether the work vectors allocated are nvec of at
// least 2^logN elements.
func (st *state) holdsVectors(logN uint32, nvec int) bool {
	return st.vecs[0] != 0 && st.vecLog >= logN && st.nvec == nvec
}

// vectorsFor returns the extra bytes needed (negative: freed) so that nvec
// work vectors hold 2^logN elements.
func (st *state) vectorsFor(logN uint32, nvec int) int64 {
	if st.holdsVectors(logN, nvec) {
		return 0
	}
	extra := vectorBytes(nvec, logN)
	if st.vecs[0] != 0 {
		extra -= vectorBytes(st.nvec, st.vecLog)
	}
	return extra
}

// ensureVectors (re)allocates nvec work vectors for 2^logN elements.
func (st *state) ensureVectors(c *driver.Ctx, logN uint32, nvec int) error {
	if st.holdsVectors(logN, nvec) {
		return nil
	}
	if err := st.freeVectors(c); err != nil {
		return err
	}
	p, err := c.Alloc(int(vectorBytes(nvec, logN)))
	if err != nil {
		return fmt.Errorf("work vectors 2^%d: %w", logN, err)
	}
	for i := range nvec {
		st.vecs[i] = p.Add(int(vectorBytes(i, logN)))
	}
	st.vecLog, st.nvec = logN, nvec
	st.vecGen++
	st.mem.add(vectorBytes(nvec, logN))
	return nil
}

func (st *state) freeVectors(c *driver.Ctx) error {
	if st.vecs[0] == 0 {
		return nil
	}
	err := c.Free(st.vecs[0])
	st.mem.add(-vectorBytes(st.nvec, st.vecLog))
	st.vecs, st.nvec = [3]driver.DevicePtr{}, 0
	return err
}

// prepare validates the size, reserves memory and returns the domain with
// the work vectors sized for it: three, or two where the key plan asks for
// a lean quotient or three do not fit (the quotient then runs lean).
func (b *Backend) prepare(c *driver.Ctx, logN uint32) (*domain, error) {
	st := b.st
	if err := st.settleAhead(c); err != nil { // the work vectors are about to be written
		return nil, err
	}
	nvec := 3
	if st.lean {
		nvec = 2
	}
	d, err := b.domainOf(c, logN, st.vectorsFor(logN, nvec))
	if nvec == 3 && errors.Is(err, ErrDeviceMemory) {
		if d, err = b.domainOf(c, logN, st.vectorsFor(logN, 2)); err == nil {
			nvec = 2
		}
	}
	if err != nil {
		return nil, err
	}
	return d, st.ensureVectors(c, logN, nvec)
}

// do runs fn on the device thread unless ctx is already done.
func (b *Backend) do(ctx context.Context, fn func(*driver.Ctx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return b.dev.Do(fn)
}

// msmEngine returns the MSM engine, loading its kernels on first use so that
// a Backend used only for quotients needs no MSM kernels.
func (b *Backend) msmEngine() (*MSM, error) {
	b.msmMu.Lock()
	defer b.msmMu.Unlock()
	if b.msm == nil {
		m, err := newMSM(b.dev, b.cfg.logger, b.st.mem)
		if err != nil {
			return nil, err
		}
		m.st.beside = b.quotientBeside
		m.st.end = &b.st.end
		m.st.room = b.ringRoom
		b.st.ringDrop = m.st.dropRing
		if err := m.SetTableMemory(b.cfg.tables); err != nil {
			return nil, errors.Join(err, m.Close())
		}
		b.msm = m
	}
	return b.msm, nil
}

// MSMG1 implements groth16.Backend on the MSM engine (bases stay resident,
// see MSM). The empty sum is the point at infinity, as on the CPU backend.
func (b *Backend) MSMG1(ctx context.Context, bases []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	if len(bases) == 0 && len(scalars) == 0 {
		return g1Infinity(), nil
	}
	m, err := b.msmEngine()
	if err != nil {
		return bls12381.G1Jac{}, fmt.Errorf("msm g1: %w", err)
	}
	return m.g1(ctx, bases, scalars, b.scalarsFor)
}

// MSMG2 implements groth16.Backend on the MSM engine; see MSMG1.
func (b *Backend) MSMG2(ctx context.Context, bases []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	if len(bases) == 0 && len(scalars) == 0 {
		return g2Infinity(), nil
	}
	m, err := b.msmEngine()
	if err != nil {
		return bls12381.G2Jac{}, fmt.Errorf("msm g2: %w", err)
	}
	return m.g2(ctx, bases, scalars, b.scalarsFor)
}

// MSMB implements groth16.BPairBackend on the MSM engine (MSM.G1G2): the
// two MSMs over the B wires, the scalars sent once and, where both MSMs
// take the same window shape, their digits sorted once. The empty sums are
// the points at infinity.
func (b *Backend) MSMB(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, scalars []fr.Element) (
	bls12381.G1Jac, bls12381.G2Jac, error) {
	if len(g1) == 0 && len(g2) == 0 && len(scalars) == 0 {
		return g1Infinity(), g2Infinity(), nil
	}
	m, err := b.msmEngine()
	if err != nil {
		return bls12381.G1Jac{}, bls12381.G2Jac{}, fmt.Errorf("msm B: %w", err)
	}
	return m.g1g2(ctx, g1, g2, scalars, b.scalarsFor, b.keepRoom)
}

// ringRoom is device memory idle until the work vectors are next written
// (settleAhead, which drops what the MSM engine sent there first): work
// vector 1, which holds h until the L‖H MSM's H chunks have read it, and
// the next quotient's a only once PrefetchQuotient's vector is on its way
// (then nothing). The MSM engine checks that the chunks of an MSM do not
// read it before it sends the next MSM's bases there (msm_ring.go).
func (b *Backend) ringRoom(*driver.Ctx) deviceSpan { return b.st.idleVector(1) }

// keepRoom is device memory idle during a B pair (MSMB) where its G1 MSM's
// chunks may keep their scalars for the G2 MSM: work vector 0, which holds
// nothing between A's MSM (its wires, sent ahead there, are read) and the
// next quotient, unless a vector sent ahead is there or on its way (then
// nothing, and each MSM sends its own scalars).
func (b *Backend) keepRoom(*driver.Ctx) deviceSpan { return b.st.idleVector(0) }

// idleVector is work vector i as device memory, unless it is not allocated
// or a vector sent ahead is there or on its way (Prefetch's, or the next
// quotient's a): then nothing.
func (st *state) idleVector(i int) deviceSpan {
	v := st.vecs[i]
	if v == 0 {
		return deviceSpan{}
	}
	for _, a := range st.ahead {
		if a.dev == v {
			return deviceSpan{}
		}
	}
	for _, s := range st.sending {
		if s.vec.dev == v {
			return deviceSpan{}
		}
	}
	if q := st.quot; (q.send != nil && q.send.vec.dev == v) || (q.ready != nil && q.ready.dev == v) {
		return deviceSpan{}
	}
	return deviceSpan{ptr: v, n: (1 << st.vecLog) * elemBytes}
}

// MSMG1Batch implements groth16.BatchBackend: the G1 MSMs of several
// proofs over the same bases in one call. Where the key plan streams the
// bases, each chunk of them crosses the link once for every vector (the
// carries beyond the first take the quotient's work vectors, idle between
// proofs' quotients); otherwise the vectors run one after another.
func (b *Backend) MSMG1Batch(ctx context.Context, bases []bls12381.G1Affine, scalars [][]fr.Element) ([]bls12381.G1Jac, error) {
	if len(bases) == 0 && len(scalars) > 0 && len(scalars[0]) == 0 {
		out := make([]bls12381.G1Jac, len(scalars))
		for i := range out {
			out[i] = g1Infinity()
		}
		return out, nil
	}
	m, err := b.msmEngine()
	if err != nil {
		return nil, fmt.Errorf("msm g1 batch: %w", err)
	}
	return m.g1Batch(ctx, bases, scalars, b.batchSpare)
}

// MSMBBatch implements groth16.BatchBackend: the B pairs of several proofs
// (MSMB) in one call; see MSMG1Batch.
func (b *Backend) MSMBBatch(ctx context.Context, g1 []bls12381.G1Affine, g2 []bls12381.G2Affine, scalars [][]fr.Element) (
	[]bls12381.G1Jac, []bls12381.G2Jac, error) {
	if len(g1) == 0 && len(g2) == 0 && len(scalars) > 0 && len(scalars[0]) == 0 {
		r1, r2 := make([]bls12381.G1Jac, len(scalars)), make([]bls12381.G2Jac, len(scalars))
		for i := range r1 {
			r1[i], r2[i] = g1Infinity(), g2Infinity()
		}
		return r1, r2, nil
	}
	m, err := b.msmEngine()
	if err != nil {
		return nil, nil, fmt.Errorf("msm B batch: %w", err)
	}
	return m.g1g2Batch(ctx, g1, g2, scalars, b.batchSpare)
}

// batchSpare returns the work vectors as room for a batch's carries, on
// the device thread: idle between quotients unless vectors were sent ahead
// into them (Prefetch), which keeps them taken (no room).
func (b *Backend) batchSpare(c *driver.Ctx) deviceSpan {
	st := b.st
	if st.vecs[0] == 0 || len(st.ahead) > 0 || len(st.want) > 0 || len(st.sending) > 0 {
		return deviceSpan{}
	}
	if err := st.settleAhead(c); err != nil {
		return deviceSpan{}
	}
	return deviceSpan{ptr: st.vecs[0], n: int(vectorBytes(st.nvec, st.vecLog))}
}
