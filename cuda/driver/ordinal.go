package driver

import (
	"fmt"
	"os"
	"strconv"

	"github.com/cuzk-dev/cuzk/internal/environ"
)

// EnvTestGPU names the variable that picks the GPU the test binaries and
// benchmarks open (an ordinal; default 0), so that every GPU of a host can
// be tested, not only the first.
const EnvTestGPU = "CUZK_TEST_GPU"

var _ = environ.Register(EnvTestGPU, "the GPU the GPU tests and benchmarks open (an ordinal, default 0)")

// TestOrdinal returns the GPU ordinal EnvTestGPU names, 0 when unset.
func TestOrdinal() (int, error) {
	s := os.Getenv(EnvTestGPU)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a GPU ordinal (0, 1, ...)", EnvTestGPU, s)
	}
	return n, nil
}

// OpenTestDevice opens the GPU TestOrdinal names.
func OpenTestDevice() (*Device, error) {
	n, err := TestOrdinal()
	if err != nil {
		return nil, err
	}
	return Open(n)
}
