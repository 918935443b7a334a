package groth16_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// heapAllocator is a HostAllocator on the Go heap that keeps track of its
// live buffers; skew offsets the buffers it returns by that many bytes and
// fail makes it refuse.
type heapAllocator struct {
	mu     sync.Mutex
	live   map[*byte]int
	allocs int
	skew   int
	fail   error
}

func newHeapAllocator() *heapAllocator { return &heapAllocator{live: map[*byte]int{}} }

func (h *heapAllocator) AllocHost(n int) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fail != nil {
		return nil, h.fail
	}
	b := make([]byte, n+8)[h.skew : h.skew+n]
	h.live[unsafe.SliceData(b)] = n
	h.allocs++
	return b, nil
}

func (h *heapAllocator) FreeHost(b []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.live[unsafe.SliceData(b)]; !ok {
		return errors.New("not allocated here")
	}
	delete(h.live, unsafe.SliceData(b))
	return nil
}

// holds reports whether v lies inside one live buffer.
func (h *heapAllocator) holds(v []fr.Element) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(v)))
	hi := lo + uintptr(len(v))*fr.Bytes
	for p, n := range h.live {
		if base := uintptr(unsafe.Pointer(p)); lo >= base && hi <= base+uintptr(n) {
			return true
		}
	}
	return false
}

// allocCheck is the CPU backend counting the MSMs whose scalars do not lie
// in the allocator's memory.
type allocCheck struct {
	groth16.Backend
	alloc   *heapAllocator
	mu      sync.Mutex
	outside int
}

func (b *allocCheck) note(v []fr.Element) {
	if !b.alloc.holds(v) {
		b.mu.Lock()
		b.outside++
		b.mu.Unlock()
	}
}

func (b *allocCheck) MSMG1(ctx context.Context, bases []bls12381.G1Affine, s []fr.Element) (bls12381.G1Jac, error) {
	b.note(s)
	return b.Backend.MSMG1(ctx, bases, s)
}

func (b *allocCheck) MSMG2(ctx context.Context, bases []bls12381.G2Affine, s []fr.Element) (bls12381.G2Jac, error) {
	b.note(s)
	return b.Backend.MSMG2(ctx, bases, s)
}

// A Workspace from an allocator takes every MSM's scalars from it, gives
// the proofs Prove gives without one, allocates only to grow, and returns
// everything on Close.
func TestWorkspaceAllocator(t *testing.T) {
	big, small := &r1cstest.MulChain{N: 60, Seed: fr.NewElement(4)}, r1cstest.NewCubic(3)
	alloc := newHeapAllocator()
	ws := groth16.NewWorkspace(alloc)
	cpuBe, err := cpu.New()
	require.NoError(t, err)
	be := &allocCheck{Backend: cpuBe, alloc: alloc}
	afterFirst := 0
	proveAcrossKeys(t, big, small, ws, be, 40, func(i int) {
		if i == 0 {
			afterFirst = alloc.allocs
		}
	})
	assert.Zero(t, be.outside, "MSMs with scalars outside the allocator's memory")
	assert.GreaterOrEqual(t, afterFirst, 1)
	assert.Equal(t, afterFirst, alloc.allocs, "allocations after the largest key")
	require.NoError(t, ws.Close())
	assert.Empty(t, alloc.live, "buffers left after Close")
	require.NoError(t, ws.Close(), "a second Close")

	// Emptied, the workspace grows again.
	fs := setup(t, small)
	asg, err := r1cs.Solve(small, r1cs.WithShape(fs.sys))
	require.NoError(t, err)
	_, err = groth16.Prove(context.Background(), fs.pk, asg, be, seeded(50), groth16.WithWorkspace(ws))
	require.NoError(t, err)
	assert.NotEmpty(t, alloc.live)
	require.NoError(t, ws.Close())
	assert.Empty(t, alloc.live)
}

// An allocator that fails, or returns memory that cannot hold field
// elements, fails Prove with an error naming the workspace.
func TestWorkspaceAllocatorErrors(t *testing.T) {
	c := r1cstest.NewCubic(3)
	f := setup(t, c)
	be, err := cpu.New()
	require.NoError(t, err)
	refused := errors.New("out of pinned memory")
	for _, tc := range []struct {
		name string
		set  func(*heapAllocator)
		want string
	}{
		{"refused", func(h *heapAllocator) { h.fail = refused }, "out of pinned memory"},
		{"misaligned", func(h *heapAllocator) { h.skew = 4 }, "aligned to 8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alloc := newHeapAllocator()
			tc.set(alloc)
			asg, err := r1cs.Solve(c, r1cs.WithShape(f.sys))
			require.NoError(t, err)
			_, err = groth16.Prove(context.Background(), f.pk, asg, be, seeded(1), groth16.WithWorkspace(groth16.NewWorkspace(alloc)))
			require.Error(t, err)
			assert.ErrorContains(t, err, "workspace")
			assert.ErrorContains(t, err, tc.want)
			assert.Empty(t, alloc.live, "a refused buffer is returned")
		})
	}
}
