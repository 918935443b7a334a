package gpubench

import (
	"errors"
	"fmt"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// ErrNoGPU marks errors meaning this machine cannot run GPU work.
var ErrNoGPU = errors.New("no GPU")

// OpenGPU opens GPU 0, mapping "no driver", "no device" and "no embedded
// kernels" to errors matching ErrNoGPU.
func OpenGPU() (*driver.Device, error) {
	if _, err := cuda.Fatbin("ntt"); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	dev, err := driver.OpenTestDevice() // GPU 0 unless CUZK_TEST_GPU names another
	if errors.Is(err, driver.ErrNoGPU) {
		return nil, fmt.Errorf("%w: %w", ErrNoGPU, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open GPU: %w", err)
	}
	return dev, nil
}
