package loadbench

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunSmallOnCPU(t *testing.T) {
	cfg := Config{Constraints: 1024, N: 3, Concurrencies: []int{1, 2}, Backend: "cpu", Direct: true, Critical: 3}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	require.NoError(t, err)
	require.Len(t, res.Rows, 2)
	for _, r := range res.Rows {
		assert.Len(t, r.Report.Proofs, 3)
		assert.Empty(t, r.Report.Failures)
		assert.Positive(t, r.P50)
		assert.GreaterOrEqual(t, r.P99, r.P50)
	}
	assert.Equal(t, "cpu", res.Backend)
	assert.Positive(t, res.Direct)
	assert.Positive(t, res.CriticalWait)
	assert.Positive(t, res.GPUJob)
	var out bytes.Buffer
	require.NoError(t, res.Write(&out, cfg))
	assert.Contains(t, out.String(), "concurrency")
	assert.Contains(t, out.String(), "overhead per proof")
	assert.Contains(t, out.String(), "CRITICAL behind 3 NORMAL")
	assert.Contains(t, out.String(), "every proof verified by the client: PASS")
}
