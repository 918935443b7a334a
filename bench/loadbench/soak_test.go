package loadbench

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/testseed"
)

// TestSoakSmall is the soak at 300 operations (go run ./bench/cmd/cuzk-bench
// soak runs 10,000): no unexpected outcome, every operation kind seen, and
// goroutines back to their level once the daemon is idle.
func TestSoakSmall(t *testing.T) {
	seed := int64(testseed.Seed(t))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Soak(ctx, SoakConfig{Jobs: 300, Concurrency: 6, Seed: seed, Samples: 3}, nil)
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, res.Write(&out))
	t.Log(out.String())
	assert.NoError(t, res.Level(20, 1.5))
	total := 0
	for _, n := range res.Outcomes {
		total += n
	}
	assert.Equal(t, 300, total)
	for _, op := range []string{"prove ok", "cancel canceled"} {
		assert.Positive(t, res.Outcomes[op], op)
	}
	assert.Contains(t, out.String(), "soak: seed")
}
