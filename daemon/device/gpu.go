package device

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sync"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/prover/gpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// GPU proves on one GPU with prover/gpu: Prove's host scratch in a
// workspace of pinned memory, bases resident across jobs. Its worker is
// its only prover; Preload and EvictKey may come from other goroutines.
type GPU struct {
	ordinal int
	opts    []gpu.Option

	mu   sync.Mutex // guards the fields below against Recover
	info driver.Info
	dev  *driver.Device
	be   *gpu.Backend
	ws   *groth16.Workspace
	// driverOwn is the device memory the driver holds for the backend
	// (gpu.Backend.ReserveDriverMemory), which a memory limit leaves it.
	driverOwn int64
	// plans are the plans of the keys preloaded on this backend
	// (gpu.Backend.PlanKey), until evicted or the backend is re-created.
	plans map[*groth16.ProvingKey]gpu.KeyPlan
	// batch is the most proofs of one streamed key proved together
	// (SetBatch); more holds the workspaces of a batch's proofs beyond
	// the first (ws), made on the first batch that needs them.
	batch int
	more  []*groth16.Workspace
	// fixedRan says which fixed-base kernels (G1, G2) have run on this
	// backend: once both have, the driver's part is measured again.
	fixedRan [2]bool
}

// DefaultBatch is the most proofs of one key a GPU proves together where
// its plan streams bases (gpu_batch's default): one. Measured end to end
// with every partition's vectors going back after its own part, a pair was
// slower than two partitions alone on an H100 at 16 GiB (5.53 s against
// 2 × 2.69 s; docs/perf.md, "Measured: host RSS with a development key,
// batches again"). Two share each chunk's upload; a third would add a
// carry and a proof's workspace for a smaller share of the link.
const DefaultBatch = 1

// OpenGPUs opens the GPUs with the given ordinals (all of them when nil).
// It returns driver.ErrNoGPU (matched with errors.Is) where there are none.
func OpenGPUs(ordinals []int, opts ...gpu.Option) ([]*GPU, error) {
	if ordinals == nil {
		n, err := driver.Count()
		if err != nil {
			return nil, err
		}
		for i := range n {
			ordinals = append(ordinals, i)
		}
	}
	var out []*GPU
	for _, o := range ordinals {
		d := &GPU{ordinal: o, opts: opts, batch: DefaultBatch}
		if err := d.open(); err != nil {
			for _, prev := range out {
				_ = prev.Close() // the open error is the one to report
			}
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

func (d *GPU) open() error {
	dev, err := driver.Open(d.ordinal)
	if err != nil {
		return err
	}
	be, err := gpu.New(dev, d.opts...)
	if err != nil {
		return errors.Join(err, dev.Close())
	}
	// A memory limit bounds the GPU's whole use, the driver's part included.
	own, err := be.ReserveDriverMemory(context.Background())
	if err != nil {
		return errors.Join(fmt.Errorf("gpu%d: %w", d.ordinal, err), be.Close(), dev.Close())
	}
	d.info, d.dev, d.be, d.ws, d.driverOwn, d.fixedRan = dev.Info(), dev, be, groth16.NewWorkspace(be), own, [2]bool{}
	d.plans = map[*groth16.ProvingKey]gpu.KeyPlan{}
	return nil
}

// Name implements engine.Device: "gpu<ordinal> <model>".
func (d *GPU) Name() string { return fmt.Sprintf("gpu%d %s", d.ordinal, d.info.Name) }

// DriverMemory is the device memory the driver holds beside the backend's
// own (modules, the kernels' local memory), measured at open; a memory
// limit leaves the prover that much less.
func (d *GPU) DriverMemory() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.driverOwn
}

// Info describes the GPU.
func (d *GPU) Info() driver.Info { return d.info }

// Backend returns the device's prover backend (its host allocator serves
// pinned synthesis buffers).
func (d *GPU) Backend() *gpu.Backend {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.be
}

// Prove implements engine.Device.
func (d *GPU) Prove(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, rnd io.Reader) (*groth16.Proof, error) {
	d.mu.Lock()
	be, ws := d.be, d.ws
	d.mu.Unlock()
	return proveOn(ctx, pk, asg, be, rnd, ws)
}

// PrefetchQuotient implements engine.QuotientPrefetcher
// (gpu.Backend.PrefetchQuotient): the next proof's first quotient vector,
// once next gives it, goes up beside this proof's A and B MSMs; nil drops
// it.
func (d *GPU) PrefetchQuotient(ctx context.Context, next func() []fr.Element) error {
	return d.Backend().PrefetchQuotient(ctx, next)
}

// SetBatch sets the most proofs of one key the GPU proves together where
// its plan streams bases (BatchSize); 1 or less proves one at a time.
func (d *GPU) SetBatch(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.batch = max(n, 1)
}

// BatchSize implements engine.BatchProver: the batch size (SetBatch) for
// a key whose plan on this GPU streams bases, whose chunks then cross the
// link once for the batch; 1 for a key held whole or not planned here.
func (d *GPU) BatchSize(pk *groth16.ProvingKey) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.plans[pk]; ok && p.StreamedBytes() > 0 {
		return d.batch
	}
	return 1
}

// ProveBatch implements engine.BatchProver (groth16.ProveBatch): the first
// proof's host scratch in the GPU's workspace, the others', joined ones
// included, in workspaces of their own, of pinned memory like it.
func (d *GPU) ProveBatch(ctx context.Context, pk *groth16.ProvingKey, b groth16.Batch, rnd io.Reader) ([]*groth16.Proof, []error) {
	d.mu.Lock()
	be, ws := d.be, d.ws
	d.mu.Unlock()
	n := 0
	// wsFor returns the next proof's workspace.
	wsFor := func() *groth16.Workspace {
		defer func() { n++ }()
		if n == 0 {
			return ws
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		for len(d.more) < n {
			d.more = append(d.more, groth16.NewWorkspace(be))
		}
		return d.more[n-1]
	}
	for i := range b.Proofs {
		b.Proofs[i].Workspace = wsFor()
	}
	if join := b.Join; join != nil {
		b.Join = func() (groth16.BatchProof, bool) {
			p, ok := join()
			if ok {
				p.Workspace = wsFor()
			}
			return p, ok
		}
	}
	return proveBatchOn(ctx, pk, b, be, rnd)
}

// MemoryHeld returns the device memory the GPU's backend holds now and at
// most since it was (re-)created (gpu.Backend.MemoryHeld).
func (d *GPU) MemoryHeld() (now, peak int64) { return d.Backend().MemoryHeld() }

// PinHost implements HostPinner on the GPU's current backend; after a
// Recover the engine has its VectorPool pin the vectors again.
func (d *GPU) PinHost(p []byte) error { return d.Backend().PinHost(p) }

// UnpinHost implements HostPinner.
func (d *GPU) UnpinHost(p []byte) error { return d.Backend().UnpinHost(p) }

// AdoptHost implements HostPinner: memory another GPU pinned counts as
// pinned here too.
func (d *GPU) AdoptHost(p []byte) error { return d.Backend().AdoptHost(p) }

// Resident implements engine.Device: bases stay on the GPU across jobs.
func (d *GPU) Resident() bool { return true }

// Preload implements engine.Device. The backend first plans the key on this GPU
// (gpu.Backend.PlanKey): on a GPU that holds the whole key beside a
// proof's working memory every bases set stays resident; otherwise the
// MSMs run in chunks and the sets that do not fit are streamed from host
// memory for each proof. Then one MSM over zero scalars per resident set
// makes it resident (with its table of multiples), as the first proof
// would.
func (d *GPU) Preload(ctx context.Context, pk *groth16.ProvingKey) error {
	be := d.Backend()
	g1, g2 := pk.Bases()
	plan, err := be.PlanKey(g1, g2, uint32(bits.TrailingZeros(uint(pk.DomainSize))))
	if err != nil {
		return err
	}
	d.mu.Lock()
	if d.be == be {
		d.plans[pk] = plan
	}
	d.mu.Unlock()
	i := 0
	resident := func() bool { // the plan lists the non-empty sets, G1 then G2
		r := plan.Sets[i].Resident
		i++
		return r
	}
	for _, b := range g1 {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(b) == 0 || !resident() {
			continue
		}
		sum, err := be.MSMG1(ctx, b, make([]fr.Element, len(b)))
		if err != nil {
			return fmt.Errorf("upload G1 bases: %w", err)
		}
		if !sum.Z.IsZero() {
			return errors.New("upload G1 bases: MSM over zero scalars is not the identity")
		}
	}
	for _, b := range g2 {
		if len(b) == 0 || !resident() {
			continue
		}
		var sum bls12381.G2Jac
		sum, err := be.MSMG2(ctx, b, make([]fr.Element, len(b)))
		if err != nil {
			return fmt.Errorf("upload G2 bases: %w", err)
		}
		if !sum.Z.IsZero() {
			return errors.New("upload G2 bases: MSM over zero scalars is not the identity")
		}
	}
	return nil
}

// KeyPlan implements engine.KeyPlanner: the plan of pk on this GPU (a
// gpu.KeyPlan), made at its Preload, while the GPU holds it.
func (d *GPU) KeyPlan(pk *groth16.ProvingKey) (Plan, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.plans[pk]
	if !ok {
		return nil, false
	}
	return p, true
}

// Plan is how one key uses a device's memory, as the engine reads it: the
// same interface type as engine.KeyPlan (an alias of one interface
// literal on both sides), so that GPU implements engine.KeyPlanner without
// this package importing the engine.
type Plan = interface {
	ResidentBytes() int64
	StreamedBytes() int64
	Peak() int64
	Whole() bool
	String() string
}

// EvictKey implements engine.Device.
func (d *GPU) EvictKey(pk *groth16.ProvingKey) error {
	d.mu.Lock()
	delete(d.plans, pk)
	d.mu.Unlock()
	g1, g2 := pk.Bases()
	return d.Backend().EvictBasesOf(g1, g2)
}

// Recover implements engine.Device: after a failure the backend and the context
// are re-created, so that a sticky CUDA error (the driver's context is
// unusable after an illegal address, say) does not outlive its job.
// Resident bases are lost and upload again on next use.
func (d *GPU) Recover(error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	closeErr := d.closeLocked()
	if err := d.open(); err != nil {
		return fmt.Errorf("reopen gpu%d: %w", d.ordinal, errors.Join(err, closeErr))
	}
	return nil
}

// Close implements engine.Device.
func (d *GPU) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.closeLocked()
}

func (d *GPU) closeLocked() error {
	var errs []error
	for _, ws := range append([]*groth16.Workspace{d.ws}, d.more...) {
		if ws != nil {
			errs = append(errs, ws.Close())
		}
	}
	d.more = nil
	if d.be != nil {
		errs = append(errs, d.be.Close())
	}
	if d.dev != nil {
		errs = append(errs, d.dev.Close())
	}
	d.ws, d.be, d.dev = nil, nil, nil
	return errors.Join(errs...)
}

// FixedBaseG1 runs a development setup's G1 fixed-base multiplications on
// this GPU (groth16.FixedBaser), on whatever backend the device has now
// (it is re-created after a fault).
func (d *GPU) FixedBaseG1(ctx context.Context, base *bls12381.G1Affine, scalars []fr.Element) ([]bls12381.G1Affine, error) {
	out, err := d.Backend().FixedBaseG1(ctx, base, scalars)
	if err != nil {
		return nil, err
	}
	return out, d.reserveAfterFixedBase(0)
}

// FixedBaseG2 is FixedBaseG1 in G2.
func (d *GPU) FixedBaseG2(ctx context.Context, base *bls12381.G2Affine, scalars []fr.Element) ([]bls12381.G2Affine, error) {
	out, err := d.Backend().FixedBaseG2(ctx, base, scalars)
	if err != nil {
		return nil, err
	}
	return out, d.reserveAfterFixedBase(1)
}

// reserveAfterFixedBase notes that the fixed-base kernel of curve (0: G1,
// 1: G2) has run on the current backend, and measures the driver's part
// again once both have: their module and local memory (about 0.3 GiB on an
// H100) come on top of what the reserve at open measured, and the key the
// setup makes is planned after it.
func (d *GPU) reserveAfterFixedBase(curve int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fixedRan[curve] {
		return nil
	}
	d.fixedRan[curve] = true
	if !d.fixedRan[0] || !d.fixedRan[1] {
		return nil
	}
	// Measure only: the warm-up would switch the quotient's mode under
	// proofs of other keys in flight on this GPU.
	own, err := d.be.ReserveAgain()
	if err != nil {
		return fmt.Errorf("gpu%d: after the fixed-base kernels: %w", d.ordinal, err)
	}
	d.driverOwn = own
	return nil
}
