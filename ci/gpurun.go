package ci

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// GPUTestPackages are the packages whose tests need a GPU.
var GPUTestPackages = []string{"./cuda/...", "./prover/gpu/..."}

// noDevice matches the messages GPU tests skip with where there is no
// GPU or driver.
var noDevice = regexp.MustCompile(`CUDA_ERROR_NO_DEVICE|no CUDA GPU|libcuda\.so\.1 not available|no CUDA device|no GPU on this machine`)

// CheckGPULog fails when a `go test -v` log of the GPU packages shows a
// test skipped for lack of a device: on a GPU runner that is a broken
// runner, not a pass. The error quotes up to five such lines.
func CheckGPULog(log []byte) error {
	var hits []string
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); noDevice.MatchString(line) {
			hits = append(hits, line)
		}
	}
	if len(hits) == 0 {
		return nil
	}
	return fmt.Errorf("GPU tests skipped for lack of a device on a GPU runner (%d lines), e.g.:\n  %s", len(hits),
		strings.Join(hits[:min(5, len(hits))], "\n  "))
}
