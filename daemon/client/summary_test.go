package client

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
)

func TestSummary(t *testing.T) {
	r := &Report{Wall: 2 * time.Second, Failures: []error{errors.New("proof 2: NotFound")}}
	for i, ms := range []time.Duration{30, 10, 20} {
		r.Proofs = append(r.Proofs, Proof{Index: i, Latency: ms * time.Millisecond, Attempts: 1,
			Result: &pb.ProofResult{JobId: "job-" + string(rune('a'+i)), Device: "cpu",
				Timings: &pb.Timings{ProveNs: int64(ms * time.Millisecond)}}})
	}
	s := r.Summary("porep-synth/constraints=1024", 2)
	assert.Equal(t, 1.5, s.PerSecond)
	assert.Equal(t, 20*time.Millisecond, s.Latency("p50"))
	assert.Equal(t, 30*time.Millisecond, s.Latency("p99"))
	assert.Equal(t, int64(20*time.Millisecond), s.PhaseMeansNs["prove"])
	assert.Equal(t, []string{"proof 2: NotFound"}, s.Failures)
	b, err := json.Marshal(s)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"job_id":"job-b"`)
	assert.Contains(t, string(b), `"latency_ns":{"p50":20000000,"p90":30000000,"p99":30000000}`)

	empty := (&Report{}).Summary("x", 1)
	b, err = json.Marshal(empty)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"proofs":[]`, "lists are never null")
}
