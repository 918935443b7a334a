package ci_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/cuzk-dev/cuzk/ci"
	"github.com/cuzk-dev/cuzk/toolchain"
)

// A mage target builds the plan (or calls ci.Kernels, which builds and runs
// it); the plan can be printed without any engine.
func ExampleKernelsPlan() {
	pins, err := toolchain.Load(nil)
	if err != nil {
		log.Fatal(err)
	}
	p, err := ci.KernelsPlan(ci.Options{Root: "/repo", Pins: pins, Environ: []string{}})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range p.Steps[1:] {
		fmt.Println(strings.Join(s.Args, " "))
	}
	v, _ := p.LookupEnv(toolchain.EnvToolchain)
	fmt.Println(toolchain.EnvToolchain + "=" + v)
	fmt.Println(p.Exports[0].Path, "->", p.Exports[0].Host)
	// Output:
	// go run mage.go kernels
	// CUZK_TOOLCHAIN=native
	// cuda/fatbin -> /repo/cuda/fatbin
}
