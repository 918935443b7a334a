//go:build mage

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/magefile/mage/sh"
)

// Test builds the kernels with the pinned nvcc, then runs go vet and every Go test (GPU tests skip visibly without a GPU).
func Test(ctx context.Context) error {
	var timings []string
	phase := func(name string, f func() error) error {
		start := time.Now()
		fmt.Printf("== %s\n", name)
		err := f()
		timings = append(timings, fmt.Sprintf("%-8s %8s", name, time.Since(start).Round(100*time.Millisecond)))
		return err
	}
	defer func() {
		fmt.Println("== phase timings")
		for _, t := range timings {
			fmt.Println("  " + t)
		}
	}()
	if err := phase("kernels", func() error { return Kernels(ctx) }); err != nil {
		return err
	}
	if err := phase("vet", func() error { return sh.RunV("go", "vet", "./...") }); err != nil {
		return err
	}
	return phase("test", func() error { return sh.RunV("go", "test", "-count=1", "-timeout", "45m", "./...") })
}
