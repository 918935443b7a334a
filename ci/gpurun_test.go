package ci

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCheckGPULog(t *testing.T) {
	ok := "=== RUN   TestMSM\n--- PASS: TestMSM (1.20s)\nPASS\n"
	assert.NoError(t, CheckGPULog([]byte(ok)))
	for _, skip := range []string{
		"    gpu_test.go:31: no CUDA device: cuda driver: CUDA_ERROR_NO_DEVICE\n--- SKIP: TestMSM (0.00s)\n",
		"    driver_test.go:12: libcuda.so.1 not available: dlopen failed\n",
		"selftest: no GPU on this machine: x\n",
	} {
		err := CheckGPULog([]byte(ok + skip))
		assert.ErrorContains(t, err, "skipped for lack of a device", skip)
	}
}
