package driver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTestOrdinal(t *testing.T) {
	t.Setenv(EnvTestGPU, "")
	n, err := TestOrdinal()
	require.NoError(t, err)
	assert.Zero(t, n)
	t.Setenv(EnvTestGPU, "1")
	n, err = TestOrdinal()
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	for _, bad := range []string{"x", "-1", "1.5"} {
		t.Setenv(EnvTestGPU, bad)
		_, err = TestOrdinal()
		assert.ErrorContains(t, err, EnvTestGPU, bad)
	}
}
