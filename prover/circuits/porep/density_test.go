package porep

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// TestShapeDensities pins what the shapes are for: at 2^20 the C2 shape
// puts about a quarter of the wires in B, as a PoRep C2 partition does,
// and Synth about three quarters (the figure of the earlier runs).
func TestShapeDensities(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles 2^20 twice")
	}
	want := map[Shape][2]float64{Synth: {0.70, 0.76}, C2: {0.22, 0.30}}
	for _, shape := range Shapes {
		c, err := shape.New(1<<20, 1)
		require.NoError(t, err)
		sys, err := r1cs.Compile(c)
		require.NoError(t, err)
		d := sys.Density()
		b := d.Share(d.B)
		t.Logf("%s 2^20: %d constraints, %d wires; A %.3f, B %.3f, C %.3f", shape, sys.NbConstraints, d.Columns,
			d.Share(d.A), b, d.Share(d.C))
		assert.GreaterOrEqual(t, b, want[shape][0], shape.String())
		assert.LessOrEqual(t, b, want[shape][1], shape.String())
	}
}
