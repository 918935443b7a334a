package client

import (
	"sort"
	"time"

	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

// Latencies returns the client-side latency of every proof.
func (r *Report) Latencies() []time.Duration {
	out := make([]time.Duration, len(r.Proofs))
	for i, p := range r.Proofs {
		out[i] = p.Latency
	}
	return out
}

// Throughput is proofs per second over the load's wall time.
func (r *Report) Throughput() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(len(r.Proofs)) / r.Wall.Seconds()
}

// PhaseMeans returns the mean of each daemon-side phase over the proofs:
// queue, key_load, synthesis, handoff, prove, verify, total, and every
// prover phase as "prove/<name>".
func (r *Report) PhaseMeans() map[string]time.Duration {
	sum := map[string]time.Duration{}
	for _, p := range r.Proofs {
		t := p.Result.GetTimings()
		for k, v := range map[string]int64{"queue": t.GetQueueNs(), "key_load": t.GetKeyLoadNs(), "synthesis": t.GetSynthesisNs(),
			"handoff": t.GetHandoffNs(), "prove": t.GetProveNs(), "verify": t.GetVerifyNs(), "total": t.GetTotalNs()} {
			sum[k] += time.Duration(v)
		}
		for k, v := range t.GetPhasesNs() {
			sum["prove/"+k] += time.Duration(v)
		}
	}
	if len(r.Proofs) > 0 {
		for k := range sum {
			sum[k] /= time.Duration(len(r.Proofs))
		}
	}
	return sum
}

// PhaseTable is PhaseMeans as a table sorted by phase, the means in ms.
func (r *Report) PhaseTable(title string) *report.Table { return phaseTable(title, r.PhaseMeans()) }

// phaseTable is means as a table sorted by phase, in ms.
func phaseTable(title string, means map[string]time.Duration) *report.Table {
	names := make([]string, 0, len(means))
	for k := range means {
		names = append(names, k)
	}
	sort.Strings(names)
	t := report.NewTable(title, "mean")
	for _, k := range names {
		t.Add(k, stats.Ms(means[k]))
	}
	return t
}
