package device

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/engine"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// The devices are the engine's, with the capabilities it looks for: a
// change on either side that breaks the match fails here, at compile time,
// not as a capability silently missed at run time.
var (
	_ engine.Device      = (*CPU)(nil)
	_ engine.Device      = (*GPU)(nil)
	_ engine.KeyPlanner  = (*GPU)(nil)
	_ HostPinner         = (*GPU)(nil)
	_ engine.VectorPool  = (*VectorPool)(nil)
	_ groth16.FixedBaser = (*GPU)(nil)
)

func TestCPUHoldsNothing(t *testing.T) {
	d, err := NewCPU("")
	require.NoError(t, err)
	assert.Equal(t, "cpu", d.Name(), "the default name")
	assert.False(t, d.Resident(), "the CPU proves from host memory")
	assert.NoError(t, d.Preload(context.Background(), &groth16.ProvingKey{}))
	assert.NoError(t, d.EvictKey(&groth16.ProvingKey{}))
	assert.NoError(t, d.Recover(nil))
	assert.NoError(t, d.Close())
	_, planner := engine.Device(d).(engine.KeyPlanner)
	assert.False(t, planner, "the CPU plans no keys")
	_, pinner := engine.Device(d).(HostPinner)
	assert.False(t, pinner, "the CPU pins no host memory")
}
