//go:build mage

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/magefile/mage/sh"

	"github.com/cuzk-dev/cuzk/internal/progress"
	"github.com/cuzk-dev/cuzk/internal/testreport"
	// The tests read CUZK_TEST_SEED: linked here, its declaration lets the
	// pins loader of every target accept it in the environment.
	_ "github.com/cuzk-dev/cuzk/internal/testseed"
)

// Test installs what the tests need, builds the kernels, runs go vet and the Go tests, and ends with the skipped tests by reason.
//
// Set-up comes first: protoc, nginx, podman and runc where missing (as
// testdeps does), then the kernels (installing the pinned nvcc if a kernel
// must be compiled, as build does). GPU tests skip without a GPU; every
// skip is listed at the end, grouped by its message. With CI=true a skip
// for any reason but the hardware (no GPU) fails the run.
//
// Environment:
//
//	CUZK_TEST_PACKAGES  package patterns to vet and test, separated by spaces (default ./...)
//	CUZK_TEST_RUN       a go test -run regexp (default: every test)
//	CUZK_TEST_RACE      true: with Go's race detector (the CI runs the daemon's packages so)
//
// For example, a subset in a container:
//
//	CUZK_TEST_PACKAGES='./toolchain/... ./ci/...' CUZK_TEST_RUN='Remote' go run mage.go test
func Test(ctx context.Context) error {
	sel := testreport.Selection{Packages: os.Getenv(testreport.EnvPackages), Run: os.Getenv(testreport.EnvRun)}
	if v := os.Getenv(testreport.EnvRace); v != "" {
		race, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s=%q: want true or false", testreport.EnvRace, v)
		}
		sel.Race = race
	}
	inCI, _ := strconv.ParseBool(os.Getenv("CI")) // unset or not a boolean: not CI
	var timings []string
	phase := func(name string, f func(tk *progress.Ticker) error) error {
		start := time.Now()
		fmt.Printf("== %s\n", name)
		tk := during("test: " + name)
		err := f(tk)
		tk.Stop()
		timings = append(timings, fmt.Sprintf("%-8s %8s", name, time.Since(start).Round(100*time.Millisecond)))
		return err
	}
	defer func() {
		fmt.Println("== phase timings")
		for _, t := range timings {
			fmt.Println("  " + t)
		}
	}()
	if err := phase("testdeps", func(*progress.Ticker) error { return Testdeps() }); err != nil {
		return err
	}
	if err := phase("kernels", func(*progress.Ticker) error { return Kernels(ctx) }); err != nil {
		return err
	}
	if err := phase("vet", func(*progress.Ticker) error { return sh.RunV("go", append([]string{"vet"}, sel.Patterns()...)...) }); err != nil {
		return err
	}
	return phase("test", func(tk *progress.Ticker) error { return goTest(ctx, sel, inCI, tk.Writer()) })
}

// goTest runs the tests of sel, then prints the summary; under CI a skip
// the hardware does not explain fails the run too. The account of each
// test goes to out (through the phase's progress, which reports only
// silences).
func goTest(ctx context.Context, sel testreport.Selection, inCI bool, out io.Writer) error {
	fmt.Printf("go test %s\n", sel)
	r, err := testreport.New(out, testreport.WithModule("github.com/cuzk-dev/cuzk"))
	if err != nil {
		return err
	}
	runErr := testreport.GoTest(ctx, r, ".", sel, 45*time.Minute, os.Stderr)
	sum := r.Summary()
	fmt.Println("== summary")
	if err := sum.Write(os.Stdout); err != nil {
		return err
	}
	if inCI {
		return errors.Join(runErr, sum.CheckCI())
	}
	return runErr
}
