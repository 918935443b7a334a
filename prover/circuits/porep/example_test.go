package porep_test

import (
	"fmt"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
)

// The layout porep-synth chooses for a 2^16-row domain.
func ExamplePlan() {
	l, err := porep.Plan(1 << 16)
	if err != nil {
		panic(err)
	}
	fmt.Printf("depth %d, %d challenges, %d rows\n", l.Depth, l.Challenges, l.Rows())
	// Output: depth 4, 28 challenges, 65530 rows
}
