package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/cuda/selftest"
	"github.com/cuzk-dev/cuzk/internal/cli"
)

// selftestCmd runs every field kernel on one GPU (-gpu, default 0) on fresh
// random inputs and compares each element with gnark-crypto.
func selftestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "selftest", "[-n elements] [-seed S] [-gpu N]", "", stderr)
	n := fs.Int("n", 1<<20, "elements per kernel")
	seed := fs.Int64("seed", 0, "random seed (0: from the clock; printed either way)")
	ordinal := fs.Int("gpu", 0, "GPU ordinal")
	if code, stop := cli.Parse(fs, args, stdout); stop {
		return code
	}
	if *seed == 0 {
		*seed = time.Now().UnixNano()
	}
	fmt.Fprintf(stdout, "selftest: seed %d\n", *seed)
	var rep selftest.Report
	dev, err := driver.Open(*ordinal)
	if err == nil {
		rep, err = selftest.Run(ctx, dev, rand.New(rand.NewPCG(uint64(*seed), 0x9e3779b97f4a7c15)), *n)
		err = errors.Join(err, dev.Close())
	}
	switch {
	case errors.Is(err, driver.ErrNoGPU):
		fmt.Fprintf(stderr, "selftest: no GPU on this machine: %v\n", err)
		return exitNoGPU
	case errors.Is(err, cuda.ErrNoKernels):
		fmt.Fprintf(stderr, "selftest: %v\n", err)
		return exitNoGPU
	case err != nil:
		fmt.Fprintf(stderr, "selftest: %v\n", err)
		return exitFail
	}
	fmt.Fprint(stdout, rep.String())
	if !rep.OK() {
		fmt.Fprintln(stderr, "selftest: FAILED")
		return exitFail
	}
	fmt.Fprintln(stdout, "selftest: PASS")
	return exitOK
}
