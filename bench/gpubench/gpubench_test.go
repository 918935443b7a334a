package gpubench

import (
	"bytes"
	"context"
	"testing"
	"time"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func TestMedian(t *testing.T) {
	assert.Equal(t, time.Duration(0), Samples(nil).Median())
	assert.Equal(t, 3*time.Millisecond, Samples{5, 1, 3}.Median()*time.Millisecond)
	assert.Equal(t, 2*time.Millisecond, Samples{4, 1, 3, 0}.Median()*time.Millisecond)
}

func TestEstimates(t *testing.T) {
	assert.Equal(t, float64(1<<19)*20, NTTMuls(20))
	// 2^20 points, c = 16: 16 windows, 2^15 buckets each.
	want := float64(1<<20)*16*10 + 16*float64(1<<15)*2*14
	assert.Equal(t, want, MSMMuls(1<<20, 16, 16, false))
	assert.Equal(t, 3*want, MSMMuls(1<<20, 16, 16, true))
	// A full table: one bucket window of 2^21 buckets for 12 digit windows.
	assert.Equal(t, float64(1<<24)*12*10+float64(1<<21)*2*14, MSMMuls(1<<24, 22, 1, false))
	r := FixedMulRate(35e9, "test")
	assert.InDelta(t, 35e9/2.25, r.Fp, 1)
	assert.Equal(t, time.Second, Estimate(35e9, r.Fr))
	assert.Equal(t, 24.0, SpparkMSMG1[20])
	assert.Zero(t, SpparkMSMG1[21], "no figure")
}

func TestPartitionMemory(t *testing.T) {
	s := Shape{Log: 27, Wires: (1 << 27) / 32 * 31}
	s.BWires = s.Wires
	p, err := PlanMemory(s)
	require.NoError(t, err)
	// A, B and L‖H in G1 at 96 bytes, B in G2 at 192 bytes.
	assert.Equal(t, int64(s.Wires*2+s.LH())*96, p.BasesG1)
	assert.Equal(t, int64(s.Wires)*192, p.BasesG2)
	assert.Greater(t, p.Scratch, int64(20<<30), "2^28-point MSM scratch")
	assert.Less(t, p.Device(), int64(139<<30), "fits an H200")
	// Host: the bases, a, b, c, the wires and Prove's buffer wires ‖ h.
	assert.Equal(t, p.BasesG1+p.BasesG2+int64(3*s.N()+2*s.Wires+s.N()-1)*32, p.Host)
	fewerB := s
	fewerB.BWires = s.Wires / 2
	q, err := PlanMemory(fewerB)
	require.NoError(t, err)
	assert.Equal(t, q.BasesG1+q.BasesG2+int64(3*s.N()+2*s.Wires+s.N()-1+fewerB.BWires)*32, q.Host,
		"and the compaction of the B wires")
	require.NoError(t, CheckFit(p, 139<<30, 200<<30))
	err = CheckFit(p, 80<<30, 0)
	require.ErrorIs(t, err, ErrNoFit)
	assert.Contains(t, err.Error(), "device memory")
	assert.ErrorIs(t, CheckFit(p, 139<<30, 64<<30), ErrNoFit, "host too small")
}

// countingAllocator is a groth16.HostAllocator on the Go heap that keeps
// the buffers it handed out.
type countingAllocator struct{ bufs [][]byte }

func (a *countingAllocator) AllocHost(n int) ([]byte, error) {
	a.bufs = append(a.bufs, make([]byte, n))
	return a.bufs[len(a.bufs)-1], nil
}

func (a *countingAllocator) FreeHost([]byte) error { return nil }

// The synthesizer solves into the allocator's buffers, or into the first
// solve's heap buffers, every time, with the values of a fresh solve.
func TestSynthesizerReusesBuffers(t *testing.T) {
	c, err := porep.New(1<<10, 5)
	require.NoError(t, err)
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	want, err := r1cs.Solve(c)
	require.NoError(t, err)
	vectors := func(a *r1cs.Assignment) [][]fr.Element { return [][]fr.Element{a.Public, a.Private, a.A, a.B, a.C} }
	for _, alloc := range []*countingAllocator{nil, {}} {
		var ha groth16.HostAllocator
		if alloc != nil {
			ha = alloc
		}
		syn, err := NewSynthesizer(c, sys, ha)
		require.NoError(t, err)
		first, err := syn.Solve()
		require.NoError(t, err)
		if alloc != nil {
			require.Len(t, alloc.bufs, 5, "public, private, a, b, c")
			for i, v := range vectors(first) {
				assert.Same(t, unsafe.SliceData(alloc.bufs[i]), (*byte)(unsafe.Pointer(unsafe.SliceData(v))), "vector %d in the allocator's memory", i)
			}
		}
		second, err := syn.Solve()
		require.NoError(t, err)
		for i, v := range vectors(second) {
			assert.Same(t, unsafe.SliceData(vectors(first)[i]), unsafe.SliceData(v), "vector %d reused", i)
			assert.Equal(t, vectors(want)[i], v, "vector %d equals a fresh solve's", i)
		}
		assert.Equal(t, want.NbConstraints, second.NbConstraints)
	}
}

// TestBenchBackendProofsVerify checks the proofs the prove command keeps
// independently of the command's own verification, and that the timed
// phases are the MSMs of the key.
func TestBenchBackendProofsVerify(t *testing.T) {
	c, err := porep.New(1<<10, 7)
	require.NoError(t, err)
	pk, vk, info, err := DevKeys("", c, 3)
	require.NoError(t, err)
	assert.False(t, info.Cached)
	be, err := cpu.New()
	require.NoError(t, err)
	cfg := ProveConfig{Runs: 2, Seed: 7}
	res, err := BenchBackend(context.Background(), "cpu", be, cfg, c, info.Shape, pk, vk)
	require.NoError(t, err)
	require.Len(t, res.Proofs, 3)
	assert.Empty(t, res.Failed)
	assert.Len(t, res.Synth, 2)
	assert.Len(t, res.Overlapped, 2, "every timed run is repeated with overlapping calls")
	assert.Equal(t, 2, res.SameOverlapped, "and gives the same proof")
	assert.Equal(t, len(pk.G1.A), res.Points[PhA])
	assert.Equal(t, len(pk.G2.B), res.Points[PhB2])
	assert.Equal(t, len(pk.G1.L)+len(pk.G1.H), res.Points[PhLH], "one MSM over L‖H")
	asg, err := r1cs.Solve(c)
	require.NoError(t, err)
	for i, raw := range res.Proofs {
		var p groth16.Proof
		_, err := p.ReadFrom(bytes.NewReader(raw))
		require.NoError(t, err, "proof %d", i)
		assert.NoError(t, groth16.Verify(vk, &p, asg.PublicInputs()), "proof %d", i)
	}
	assert.NotEqual(t, res.Proofs[1], res.Proofs[2], "each run draws its own r, s")

	// The same seed gives the same proof bytes: what the CPU/GPU comparison relies on.
	again, err := BenchBackend(context.Background(), "cpu", be, cfg, c, info.Shape, pk, vk)
	require.NoError(t, err)
	assert.Equal(t, res.Proofs, again.Proofs)
}
