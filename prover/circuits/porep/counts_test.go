package porep

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func TestCountsAreTheCompiledCounts(t *testing.T) {
	targets := []int{1 << 10, 4096 + 37, 1 << 14, 1 << 17}
	if testing.Short() {
		targets = targets[:3]
	}
	for _, shape := range Shapes {
		for _, target := range targets {
			t.Run(fmt.Sprintf("%s/%d", shape, target), func(t *testing.T) {
				c, err := shape.New(target, 5)
				require.NoError(t, err)
				sys, err := r1cs.Compile(c)
				require.NoError(t, err)
				got, err := shape.Counts(target)
				require.NoError(t, err)
				assert.Equal(t, [3]int{sys.NbPublic, sys.NbPrivate, sys.NbConstraints},
					[3]int{got.NbPublic, got.NbPrivate, got.NbConstraints})
				// The densities bound the compile's from above, by at most
				// the head (publics, replica bits, comm_r_last) and two
				// columns a challenge.
				require.NotNil(t, got.Columns)
				real, bound := sys.Density(), *got.Columns
				slack := sys.NbPublic + replicaCost + 2*(sys.NbPublic-3)
				assert.Equal(t, real.Columns, bound.Columns)
				for i, m := range []struct{ real, bound int }{{real.A, bound.A}, {real.B, bound.B}, {real.C, bound.C}} {
					assert.GreaterOrEqual(t, m.bound, m.real, "matrix %d", i)
					assert.LessOrEqual(t, m.bound-m.real, slack, "matrix %d", i)
				}
				t.Logf("A %d (bound %d), B %d (bound %d), C %d (bound %d), %d columns", real.A, bound.A, real.B, bound.B,
					real.C, bound.C, real.Columns)
			})
		}
	}
	_, err := Counts(MinTarget - 1)
	assert.Error(t, err)
}
