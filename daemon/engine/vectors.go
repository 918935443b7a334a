package engine

import (
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// VectorPool makes the vectors jobs are solved into outside the Go heap,
// page-locked for the devices that move them by DMA (no staging copies on
// the host's cores), where the Go collector neither counts nor scans them.
// daemon/device makes one over the devices (device.VectorPool); the engine
// holds its sets in its budget and frees them, and tells it of a device's
// recovery. Without one, or with one not Enabled, vectors live on the Go
// heap.
type VectorPool interface {
	// Enabled reports whether Alloc makes vectors (a device pins host
	// memory).
	Enabled() bool
	// Alloc returns empty vectors shaped for sys in the pool's memory,
	// pinned where pinning succeeds (it is a speed-up only: the vectors of
	// a failed pin are still returned, and used).
	Alloc(sys *r1cs.System) (HostVectors, error)
	// Repin restores the pinning of every set not yet released on dev, one
	// of the engine's Devices that recovered (Device.Recover: a new device
	// context holds none). dev is any so that the pool's package need not
	// import the engine; a device that pins nothing is ignored.
	Repin(dev any)
}

// HostVectors is one set of vectors a VectorPool made: Assignment is its
// empty vectors to solve into (r1cs.WithBuffers), Owns reports whether
// asg's vectors lie in its memory (Solve kept them there), and Release
// unpins and frees the memory (a second Release does nothing; nothing in
// the memory may be used afterwards). It is an alias of an interface
// literal, as KeyPlan is, so that a pool's package returns the same type
// without importing the engine.
type HostVectors = interface {
	Assignment() *r1cs.Assignment
	Owns(asg *r1cs.Assignment) bool
	Release() error
}

// vectors is one job's solved vectors and the memory under them.
type vectors struct {
	asg *r1cs.Assignment // the last solve, or the empty shape to solve into
	mem HostVectors      // the pool's memory under asg; nil: asg is on the heap
}

// hostVectors is the engine's side of its VectorPool: it makes and frees
// the vectors jobs solve into, out of the heap where the pool is enabled.
type hostVectors struct {
	pool VectorPool // nil: vectors live on the Go heap
}

func newHostVectors(pool VectorPool) *hostVectors {
	if pool != nil && !pool.Enabled() {
		pool = nil
	}
	return &hostVectors{pool: pool}
}

// enabled reports whether alloc makes vectors out of the heap.
func (hv *hostVectors) enabled() bool { return hv.pool != nil }

// alloc returns empty vectors shaped for sys in the pool's memory, or nil
// (Solve then allocates on the heap) when there is no pool.
func (hv *hostVectors) alloc(sys *r1cs.System) (*vectors, error) {
	if hv.pool == nil {
		return nil, nil
	}
	mem, err := hv.pool.Alloc(sys)
	if err != nil || mem == nil {
		return nil, err
	}
	return &vectors{asg: mem.Assignment(), mem: mem}, nil
}

// free releases v's memory (unpinned first); heap vectors are left to the
// collector. v must not be used afterwards.
func (hv *hostVectors) free(v *vectors) error {
	if v == nil {
		return nil
	}
	err := hv.unmap(v)
	v.asg = nil
	return err
}

// unmap releases v's out-of-heap memory, if any, and leaves v.asg alone
// (for vectors Solve moved to the heap).
func (hv *hostVectors) unmap(v *vectors) error {
	if v.mem == nil {
		return nil
	}
	mem := v.mem
	v.mem = nil
	return mem.Release()
}

// repin restores every live vector's pinning on d after d recovered.
func (hv *hostVectors) repin(d Device) {
	if hv.pool != nil {
		hv.pool.Repin(d)
	}
}

// owns reports whether asg's vectors lie in v's memory (Solve kept them
// there), which must hold for v to serve the next job.
func (v *vectors) owns(asg *r1cs.Assignment) bool {
	return v.mem == nil || v.mem.Owns(asg)
}
