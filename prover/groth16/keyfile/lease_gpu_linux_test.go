package keyfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile/keyfiletest"
)

// TestGPURegisteredMappingSurvivesTruncation: a GPU backend page-locks the
// bases it streams from a mapped key file (prover/gpu pinForStreaming:
// HostRegisterReadOnly) and copies them by DMA for every proof. When
// another process truncates the leased file, the mapping is replaced by its
// private copy under the registration: DMA from the registered range still
// brings the original bytes, the CPU reads the copy, and unregistering
// afterwards works. In a child process, so that a fault fails the test with
// its cause. It skips visibly without a GPU (and where no lease can be
// taken).
func TestGPURegisteredMappingSurvivesTruncation(t *testing.T) {
	if !inChild(t) {
		return
	}
	dev, err := driver.Open(0)
	if errors.Is(err, driver.ErrNoGPU) {
		t.Skipf("SKIP (visible): no CUDA GPU on this machine: %v", err)
	}
	require.NoError(t, err)
	defer dev.Close()
	broke := make(chan *Key, 1)
	k, path := leasedKey(t, func(k *Key) { broke <- k })
	secs := pointBytes(k.PK)
	want := clone(secs)
	var regs []*driver.HostBuf
	require.NoError(t, dev.Do(func(c *driver.Ctx) error {
		for _, s := range secs {
			if len(s) == 0 {
				continue
			}
			h, err := c.HostRegisterReadOnly(s)
			if err != nil {
				return err
			}
			regs = append(regs, h)
		}
		return nil
	}))
	// copy checks that every section comes through DMA from the
	// registered range as it was written.
	copyAll := func(when string) {
		require.NoError(t, dev.Do(func(c *driver.Ctx) error {
			for i, s := range secs {
				if len(s) == 0 {
					continue
				}
				if !c.Pinned(s) {
					return fmt.Errorf("%s: section %d not page-locked", when, i)
				}
				d, err := c.Alloc(len(s))
				if err != nil {
					return err
				}
				got := make([]byte, len(s))
				err = c.HtoD(d, s)
				if err == nil {
					err = c.DtoH(got, d)
				}
				err = errors.Join(err, c.Free(d))
				if err != nil {
					return fmt.Errorf("%s: section %d: %w", when, i, err)
				}
				if !bytes.Equal(got, want[i]) {
					return fmt.Errorf("%s: section %d arrived with other bytes", when, i)
				}
			}
			return nil
		}))
	}
	copyAll("before the truncation")

	out, err := keyfiletest.TruncateCmd(path, Align).CombinedOutput()
	require.NoError(t, err, "truncate: %s", out)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, int64(Align), st.Size(), "the truncation completed")
	select {
	case got := <-broke:
		assert.Same(t, k, got)
	case <-time.After(10 * time.Second):
		t.Fatal("onBreak was not called")
	}
	require.ErrorIs(t, k.Changed(), ErrChanged)

	copyAll("after the truncation")
	assert.Equal(t, want, pointBytes(k.PK), "the CPU reads the private copy")
	require.NoError(t, dev.Do(func(c *driver.Ctx) error {
		var err error
		for _, h := range regs {
			err = errors.Join(err, c.HostUnregister(h))
		}
		return err
	}))
	require.NoError(t, k.Close())
}
