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
				assert.Equal(t, sys.Counts(), got)
			})
		}
	}
	_, err := Counts(MinTarget - 1)
	assert.Error(t, err)
}
