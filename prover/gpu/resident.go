package gpu

import (
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// EvictBasesOf frees the resident bases sets that start at the given
// slices (as groth16.ProvingKey.Bases lists them), leaving every other set
// resident. Slices that are not resident are ignored. It is safe to call
// while other keys' MSMs run: device work is serialized on the device.
func (b *Backend) EvictBasesOf(g1 [][]bls12381.G1Affine, g2 [][]bls12381.G2Affine) error {
	b.msmMu.Lock()
	m := b.msm
	b.msmMu.Unlock()
	if m == nil {
		return nil // no MSM has run: nothing is resident
	}
	var keys []uintptr
	for _, s := range g1 {
		if len(s) > 0 {
			keys = append(keys, uintptr(unsafe.Pointer(unsafe.SliceData(s))))
		}
	}
	for _, s := range g2 {
		if len(s) > 0 {
			keys = append(keys, uintptr(unsafe.Pointer(unsafe.SliceData(s))))
		}
	}
	return m.dev.Do(func(c *driver.Ctx) error {
		for _, k := range keys {
			if _, ok := m.st.resident[k]; ok {
				if err := m.st.free(c, k); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
