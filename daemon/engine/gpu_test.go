package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/daemon/device"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// testGPU opens the GPU named by CUZK_TEST_GPU (default 0), skipping the
// test visibly where there is none or no kernels are embedded.
func testGPU(t *testing.T) *device.GPU {
	t.Helper()
	if _, err := cuda.Embedded(); err != nil {
		t.Skipf("SKIP (visible): no kernels embedded in this test binary (built by `go run mage.go gpu`): %v", err)
	}
	ord, err := driver.TestOrdinal()
	require.NoError(t, err)
	devs, err := device.OpenGPUs([]int{ord})
	if errors.Is(err, driver.ErrNoGPU) {
		t.Skipf("SKIP (visible): no CUDA GPU on this machine: %v", err)
	}
	require.NoError(t, err)
	return devs[0]
}

// TestGPUProofsEqualCPUProofs proves the same jobs with the same blinding
// on the GPU device and on the CPU reference and compares the proofs byte
// for byte (every one also verifies).
func TestGPUProofsEqualCPUProofs(t *testing.T) {
	g := testGPU(t)
	cpu, err := device.NewCPU("cpu")
	require.NoError(t, err)
	dir := t.TempDir()
	c := porep(t, 1<<12)
	proofs := map[string][][]byte{}
	for _, d := range []Device{g, cpu} {
		km, err := keys.New(keys.Config{Dir: dir, DevSeed: 1})
		require.NoError(t, err)
		e := newEngine(t, Config{Keys: km, Synthesizers: 1, Rand: devkeys.Rand(7, 1)}, d)
		for s := range uint64(3) {
			r, err := wait(t, submit(t, e, c, 100+s, Normal))
			require.NoError(t, err, d.Name())
			require.True(t, r.Verified)
			var b bytes.Buffer
			_, err = r.Proof.WriteTo(&b)
			require.NoError(t, err)
			proofs[d.Name()] = append(proofs[d.Name()], b.Bytes())
		}
	}
	require.Len(t, proofs[g.Name()], 3)
	assert.Equal(t, proofs["cpu"], proofs[g.Name()], "GPU proofs equal the CPU reference's byte for byte")
}

// faultyGPU fails chosen proofs after the GPU has done them, as a device
// error would, and counts recoveries (the real ones: the context is
// re-created).
type faultyGPU struct {
	*device.GPU
	fail     atomic.Int32 // proofs left to fail
	recovers atomic.Int32
}

func (f *faultyGPU) Prove(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, rnd io.Reader) (*groth16.Proof, error) {
	p, err := f.GPU.Prove(ctx, pk, asg, rnd)
	if err == nil && f.fail.Add(-1) >= 0 {
		return nil, errors.New("injected fault after the device work")
	}
	return p, err
}

func (f *faultyGPU) Recover(err error) error {
	f.recovers.Add(1)
	return f.GPU.Recover(err)
}

func TestGPUFaultCancelPreloadEvict(t *testing.T) {
	f := &faultyGPU{GPU: testGPU(t)}
	f.fail.Store(1)
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1})
	require.NoError(t, err)
	e := newEngine(t, Config{Keys: km, Synthesizers: 2}, f)
	c := porep(t, 1<<14)

	require.NoError(t, e.Preload(context.Background(), c, true))
	assert.True(t, km.IsHotOn(c.Key, f.Name()), "preloaded onto the GPU")

	_, err = wait(t, submit(t, e, c, 1, Normal))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "injected fault")
	assert.Equal(t, int32(1), f.recovers.Load(), "the GPU context was re-created")
	assert.False(t, km.IsHotOn(c.Key, f.Name()), "a re-created context holds no bases")

	r, err := wait(t, submit(t, e, c, 2, Normal))
	require.NoError(t, err, "the next job proves on the recovered GPU")
	assert.True(t, r.Verified)
	assert.True(t, km.IsHotOn(c.Key, f.Name()))

	info, err := km.EvictKey(c.Key, keys.Warm)
	require.NoError(t, err)
	assert.Equal(t, keys.Warm, info.Tier)
	r, err = wait(t, submit(t, e, c, 3, Normal))
	require.NoError(t, err, "proves after its bases were evicted (uploads again)")
	assert.True(t, r.Verified)

	// Cancel a job while it is on the GPU: it ends cancelled, the worker goes on.
	j := submit(t, e, porep(t, 1<<18), 4, Normal)
	require.Eventually(t, func() bool { return j.State() == Proving }, 2*time.Minute, time.Millisecond)
	_, err = e.Cancel(j.ID)
	require.NoError(t, err)
	_, err = wait(t, j)
	require.ErrorIs(t, err, context.Canceled)
	r, err = wait(t, submit(t, e, c, 5, Normal))
	require.NoError(t, err)
	assert.True(t, r.Verified)
}

// TestGPUReleasedHostKeyProves checks keys.Config.ReleaseHostCopy on a real
// GPU: after the preload the host holds zeros inside the key's bases, the
// GPU finds its resident copy by their addresses and first points, and
// every proof verifies; an eviction takes the key to cold and the next job
// loads it again.
func TestGPUReleasedHostKeyProves(t *testing.T) {
	g := testGPU(t)
	km, err := keys.New(keys.Config{Dir: t.TempDir(), DevSeed: 1, DevKeysInMemory: true, ReleaseHostCopy: true})
	require.NoError(t, err)
	e := newEngine(t, Config{Keys: km, Synthesizers: 1}, g)
	c := porep(t, 1<<16)
	require.NoError(t, e.Preload(context.Background(), c, true))
	h, err := km.Acquire(context.Background(), c)
	require.NoError(t, err)
	mid := len(h.PK.G1.B) / 2
	assert.True(t, h.PK.G1.B[mid].IsInfinity(), "the host copy is released")
	h.Release()
	for s := range uint64(3) {
		r, err := wait(t, submit(t, e, c, 10+s, Normal))
		require.NoError(t, err)
		assert.True(t, r.Verified, "proof %d from the GPU-only key", s)
	}
	info, err := km.EvictKey(c.Key, keys.Warm)
	require.NoError(t, err)
	assert.Equal(t, keys.Cold, info.Tier, "no host copy to stay warm with")
	r, err := wait(t, submit(t, e, c, 20, Normal))
	require.NoError(t, err, "loaded again, then proved")
	assert.True(t, r.Verified)
}
