package device

import (
	"encoding/binary"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/device/devicetest"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// porepSystem is the shape of a small porep-synth circuit, and the circuit.
func porepSystem(t *testing.T) (*r1cs.System, *registry.Resolved) {
	t.Helper()
	c, err := registry.Default().Resolve("porep-synth", map[string]uint64{"constraints": 1024})
	require.NoError(t, err)
	sys, _, err := c.Counts()
	require.NoError(t, err)
	return sys, c
}

func TestPoolWithoutPinnerLeavesVectorsOnTheHeap(t *testing.T) {
	cpu, err := NewCPU("")
	require.NoError(t, err)
	vp := NewVectorPool([]any{cpu}, nil)
	assert.False(t, vp.Enabled(), "the CPU pins nothing")
	sys, _ := porepSystem(t)
	v, err := vp.Alloc(sys)
	require.NoError(t, err)
	assert.Nil(t, v, "no vectors: Solve allocates on the heap")
	vp.Repin(cpu) // a device that pins nothing: nothing to do
}

func TestSecondGPUAdoptsTheFirstsPinnedVectors(t *testing.T) {
	var log []string
	d0, d1 := devicetest.NewPinner("pin0", &log), devicetest.NewPinner("pin1", &log)
	vp := NewVectorPool([]*devicetest.Pinner{d0, d1}, nil)
	require.True(t, vp.Enabled())
	sys, _ := porepSystem(t)
	v, err := vp.Alloc(sys)
	require.NoError(t, err)
	assert.Len(t, d0.Pinned, 1, "the first GPU registers the memory")
	assert.Empty(t, d1.Pinned, "the second does not register it again")
	assert.Len(t, d1.Adopted, 1, "it adopts the first's portable registration")

	vp.Repin(d1) // the second GPU recovered: it adopts again, the first keeps its registration
	assert.Equal(t, 1, d0.Pins)
	assert.Len(t, d1.Adopted, 1)
	vp.Repin(d0) // the first recovered: it registers again
	assert.Equal(t, 2, d0.Pins)

	require.NoError(t, v.Release())
	assert.Equal(t, []string{"pin1", "pin0"}, log, "adopters forget the memory before the registration ends")
	assert.Empty(t, d0.Pinned)
	assert.Empty(t, d1.Adopted)
	require.NoError(t, v.Release(), "a second release does nothing")
	assert.Equal(t, []string{"pin1", "pin0"}, log)
}

func TestVectorsOwnTheirSolveAndReleaseUnpinsAndFrees(t *testing.T) {
	d := devicetest.NewPinner("pin0", nil)
	vp := NewVectorPool([]HostPinner{d}, nil)
	sys, c := porepSystem(t)
	hv, err := vp.Alloc(sys)
	require.NoError(t, err)
	v := hv.(*vectorSet)
	circ, err := c.Circuit(binary.LittleEndian.AppendUint64(nil, 3))
	require.NoError(t, err)
	asg, err := r1cs.Solve(circ, r1cs.WithShape(sys), r1cs.WithBuffers(v.Assignment()))
	require.NoError(t, err)
	assert.True(t, v.Owns(asg), "Solve filled the vectors in place")
	heap, err := r1cs.Solve(circ, r1cs.WithShape(sys))
	require.NoError(t, err)
	assert.False(t, v.Owns(heap), "a solve into fresh heap vectors is not theirs")
	require.NoError(t, v.Release())
	assert.Nil(t, v.mem)
	assert.Nil(t, v.Assignment(), "released: no vectors to solve into")
	assert.Empty(t, vp.live)
	assert.Empty(t, d.Pinned)
}

func TestUnpinnedVectorsAreStillMadeAndWarnedOfOnce(t *testing.T) {
	d := devicetest.Refusing{Pinner: devicetest.NewPinner("pin0", nil)}
	other := devicetest.NewPinner("pin1", nil)
	var logs strings.Builder
	vp := NewVectorPool([]HostPinner{d, other}, slog.New(slog.NewTextHandler(&logs, nil)))
	sys, _ := porepSystem(t)
	var sets []HostVectors
	for range 3 {
		v, err := vp.Alloc(sys)
		require.NoError(t, err)
		require.NotNil(t, v, "vectors outside the heap serve unpinned too")
		sets = append(sets, v)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "solved vectors not pinned"), "logged once")
	assert.Empty(t, other.Adopted, "nothing adopts memory that is not pinned")
	for _, v := range sets {
		require.NoError(t, v.Release())
	}
	assert.Empty(t, vp.live)
}
