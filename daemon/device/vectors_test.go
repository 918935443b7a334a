package device

import (
	"encoding/binary"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// recordingPinner is a HostPinner that records what it was given, as the
// GPU device would page-lock it.
type recordingPinner struct {
	name    string
	mu      sync.Mutex
	pinned  map[*byte]int
	pins    int
	adopted map[*byte]bool
	log     *[]string // shared by the pinners of a test: who unpinned, in order
}

func newRecording(name string, log *[]string) *recordingPinner {
	return &recordingPinner{name: name, pinned: map[*byte]int{}, adopted: map[*byte]bool{}, log: log}
}

func (d *recordingPinner) AdoptHost(p []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.adopted[unsafe.SliceData(p)] = true
	return nil
}

func (d *recordingPinner) PinHost(p []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pinned[unsafe.SliceData(p)] = len(p)
	d.pins++
	return nil
}

func (d *recordingPinner) UnpinHost(p []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.pinned, unsafe.SliceData(p))
	delete(d.adopted, unsafe.SliceData(p))
	if d.log != nil {
		*d.log = append(*d.log, d.name)
	}
	return nil
}

// refusingPinner refuses every PinHost, as a low locked-memory limit would.
type refusingPinner struct{ *recordingPinner }

func (refusingPinner) PinHost([]byte) error { return errors.New("mlock limit") }

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
	d0, d1 := newRecording("pin0", &log), newRecording("pin1", &log)
	vp := NewVectorPool([]*recordingPinner{d0, d1}, nil)
	require.True(t, vp.Enabled())
	sys, _ := porepSystem(t)
	v, err := vp.Alloc(sys)
	require.NoError(t, err)
	assert.Len(t, d0.pinned, 1, "the first GPU registers the memory")
	assert.Empty(t, d1.pinned, "the second does not register it again")
	assert.Len(t, d1.adopted, 1, "it adopts the first's portable registration")

	vp.Repin(d1) // the second GPU recovered: it adopts again, the first keeps its registration
	assert.Equal(t, 1, d0.pins)
	assert.Len(t, d1.adopted, 1)
	vp.Repin(d0) // the first recovered: it registers again
	assert.Equal(t, 2, d0.pins)

	require.NoError(t, v.Release())
	assert.Equal(t, []string{"pin1", "pin0"}, log, "adopters forget the memory before the registration ends")
	assert.Empty(t, d0.pinned)
	assert.Empty(t, d1.adopted)
	require.NoError(t, v.Release(), "a second release does nothing")
	assert.Equal(t, []string{"pin1", "pin0"}, log)
}

func TestVectorsOwnTheirSolveAndReleaseUnpinsAndFrees(t *testing.T) {
	d := newRecording("pin0", nil)
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
	assert.Empty(t, d.pinned)
}

func TestUnpinnedVectorsAreStillMadeAndWarnedOfOnce(t *testing.T) {
	d := refusingPinner{newRecording("pin0", nil)}
	other := newRecording("pin1", nil)
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
	assert.Empty(t, other.adopted, "nothing adopts memory that is not pinned")
	for _, v := range sets {
		require.NoError(t, v.Release())
	}
	assert.Empty(t, vp.live)
}
