package selftest_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/cuda/driver"
	"github.com/cuzk-dev/cuzk/cuda/selftest"
)

// A daemon checks its kernels at start and says plainly when it cannot.
func ExampleRun() {
	rep, err := selftest.Run(context.Background(), nil, rand.New(rand.NewPCG(1, 2)), 1<<16)
	switch {
	case errors.Is(err, driver.ErrNoGPU):
		fmt.Println("no GPU; using the CPU backend:", err)
	case errors.Is(err, cuda.ErrNoKernels):
		fmt.Println("binary built without kernels:", err)
	case err != nil:
		fmt.Println("selftest could not run:", err)
	case !rep.OK():
		fmt.Print("GPU kernels disagree with gnark-crypto:\n", rep)
	default:
		fmt.Print(rep)
	}
}
