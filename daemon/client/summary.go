package client

import (
	"time"

	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// Summary is a load's outcome as a command prints it, and as its JSON form
// gives it to scripts: every proof with its job id (each one verified by the
// client), the failures, throughput, latency quantiles (internal/stats'
// definition) and the daemon's mean phases.
type Summary struct {
	Circuit     string         `json:"circuit"`
	Concurrency int            `json:"concurrency"`
	Proofs      []ProofSummary `json:"proofs"`
	Failures    []string       `json:"failures"`
	WallNs      int64          `json:"wall_ns"`
	PerSecond   float64        `json:"proofs_per_second"`
	// LatencyNs holds the client-side latency's p50, p90 and p99.
	LatencyNs map[string]int64 `json:"latency_ns"`
	// PhaseMeansNs is PhaseMeans in nanoseconds.
	PhaseMeansNs map[string]int64 `json:"phase_means_ns"`
}

// ProofSummary is one verified proof of a load.
type ProofSummary struct {
	Index     int    `json:"index"`
	JobID     string `json:"job_id"`
	Device    string `json:"device"`
	LatencyNs int64  `json:"latency_ns"`
	Attempts  int    `json:"attempts"`
}

// Summary sums r up for a load of circuit at concurrency.
func (r *Report) Summary(circuit string, concurrency int) Summary {
	s := Summary{Circuit: circuit, Concurrency: concurrency, Proofs: []ProofSummary{}, Failures: []string{},
		WallNs: int64(r.Wall), PerSecond: r.Throughput(), LatencyNs: map[string]int64{}, PhaseMeansNs: map[string]int64{}}
	for _, p := range r.Proofs {
		s.Proofs = append(s.Proofs, ProofSummary{Index: p.Index, JobID: p.Result.GetJobId(), Device: p.Result.GetDevice(),
			LatencyNs: int64(p.Latency), Attempts: p.Attempts})
	}
	for _, f := range r.Failures {
		s.Failures = append(s.Failures, f.Error())
	}
	q := stats.Quantiles(r.Latencies(), .5, .9, .99)
	for i, name := range []string{"p50", "p90", "p99"} {
		s.LatencyNs[name] = int64(q[i])
	}
	for k, v := range r.PhaseMeans() {
		s.PhaseMeansNs[k] = int64(v)
	}
	return s
}

// PhaseTable is the daemon's mean phases as a table sorted by phase, in ms
// (Report.PhaseTable's).
func (s Summary) PhaseTable(title string) *report.Table {
	means := map[string]time.Duration{}
	for k, v := range s.PhaseMeansNs {
		means[k] = time.Duration(v)
	}
	return phaseTable(title, means)
}

// Latency returns the summary's quantile named p50, p90 or p99.
func (s Summary) Latency(name string) time.Duration { return time.Duration(s.LatencyNs[name]) }

// ExampleInput returns the input of a proof of c with the circuit's example
// inputs, as RunLoad makes them: for partitions P > 1, the examples for
// seed … seed+P−1 concatenated (a multi-partition job's input).
func ExampleInput(c *registry.Resolved, seed int64, partitions int) ([]byte, error) {
	var in []byte
	for k := range max(1, partitions) {
		b, err := c.Example(seed + int64(k))
		if err != nil {
			return nil, err
		}
		in = append(in, b...)
	}
	return in, nil
}
