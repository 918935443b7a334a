//go:build mage

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/magefile/mage/mg"
	"github.com/magefile/mage/sh"

	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/internal/environ"
)

// gpuPackages hold the tests that need a GPU.
var gpuPackages = []string{"cuda/driver", "cuda/selftest", "prover/gpu", "bench/gpubench", "bench/cmd/cuzk-bench", "prover/groth16/keyfile", "daemon/engine"}

// gpuSkip matches the tests of gpuPackages that need no GPU and take long:
// the kernels emulated on the host, which every CPU suite runs (`test`,
// .ci/run). run.sh leaves them out, about half of its time on a device;
// CUZK_GPU_SKIP overrides it (empty: run every test).
const gpuSkip = "Kernels?OnHost$"

// envGPUSkip names the variable run.sh reads for its -test.skip pattern.
const envGPUSkip = "CUZK_GPU_SKIP"

var _ = environ.Register(envGPUSkip, ".gpu/run.sh's -test.skip pattern: the tests it leaves out (default Kernels?OnHost$, the kernels emulated on the host, which every CPU suite runs; empty: none)")

// Gpu builds the GPU test binaries, cuzk-daemon and cuzk-bench (fatbins embedded) into .gpu/ with run.sh, to run where a GPU is.
func Gpu(ctx context.Context) error {
	mg.CtxDeps(ctx, Kernels)
	if err := os.MkdirAll(".gpu", 0o755); err != nil {
		return err
	}
	tk := during("gpu: building the GPU test binaries")
	defer tk.Stop()
	var lines []string
	for _, p := range gpuPackages {
		tk.Set("gpu: go test -c ./" + p)
		bin := strings.ReplaceAll(p, "/", "_") + ".test"
		if err := sh.RunV("go", "test", "-c", "-ldflags=-s -w", "-o", filepath.Join(".gpu", bin), "./"+p); err != nil {
			return fmt.Errorf("gpu: build %s: %w", p, err)
		}
		lines = append(lines, fmt.Sprintf("(cd \"$root/%s\" && \"$root/.gpu/%s\" -test.v -test.run \"$run\" -test.skip \"$skip\" -test.bench \"$bench\" -test.benchtime \"$benchtime\") || rc=1", p, bin))
	}
	if err := sh.RunV("go", "build", "-ldflags=-s -w", "-o", ".gpu/", "./daemon/cmd/cuzk-daemon", "./bench/cmd/cuzk-bench"); err != nil {
		return err
	}
	script := strings.ReplaceAll(`#!/bin/sh
# Runs cuzk's GPU tests (and benchmarks matching $1) from the binaries that
# `+"`go run mage.go gpu`"+` built. Usage: .gpu/run.sh [bench-regex] [test-regex]
# @TEST_GPU@=1 .gpu/run.sh runs them on GPU 1 instead of GPU 0;
# @TEST_GPU@=all runs them on every GPU in turn. Tests that need no GPU and
# run in every CPU suite are left out (@SKIPVAR@, a -test.skip pattern;
# empty: none left out).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${@TEST_GPU@:-0}" = all ]; then
  rc=0
  n=$(nvidia-smi -L | grep -c '^GPU ')
  i=0
  while [ "$i" -lt "$n" ]; do
    echo "run.sh: GPU $i of $n"
    @TEST_GPU@=$i "$0" "$@" || rc=1
    i=$((i + 1))
  done
  echo "run.sh: all $n GPUs: exit $rc"
  exit $rc
fi
bench=${1:-NONE}; run=${2:-.}; benchtime=${BENCHTIME:-10x}; skip=${@SKIPVAR@-'@SKIP@'}
rc=0
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv || true
"$root/.gpu/cuzk-daemon" version || rc=1
"$root/.gpu/cuzk-daemon" selftest -n 1048576 -gpu "${@TEST_GPU@:-0}" || rc=1
`+strings.Join(lines, "\n")+`
echo "run.sh: exit $rc"
exit $rc
`, "@TEST_GPU@", driver.EnvTestGPU) // the ordinal the test binaries read
	script = strings.NewReplacer("@SKIPVAR@", envGPUSkip, "@SKIP@", gpuSkip).Replace(script)
	return os.WriteFile(".gpu/run.sh", []byte(script), 0o755)
}
