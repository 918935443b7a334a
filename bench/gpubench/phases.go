package gpubench

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/gpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// Phase is one backend call of groth16.Prove, as the benchmarks table it.
type Phase int

// The phases, in table order.
const (
	PhQuotient Phase = iota // QuotientH: 3 iNTT + 3 coset NTT + 1 coset iNTT
	PhA                     // MSM G1 over the A wires
	PhB1                    // MSM G1 over the B wires
	PhB2                    // MSM G2 over the B wires
	PhLH                    // MSM G1 over L‖H (two MSMs for a key with L and H apart)
	PhQLH                   // the L‖H MSM of the fused call (groth16.QuotientLHBackend), h from the quotient on the GPU
	NumPhases
)

// PhaseShort names the phases in errors.
var PhaseShort = [NumPhases]string{PhQuotient: "quotient", PhA: "A", PhB1: "B G1", PhB2: "B G2", PhLH: "L‖H",
	PhQLH: "quotient and L‖H"}

// MSM pipeline stages, in order; they add up to the device compute time.
const (
	StSort = iota
	StAccumulate
	StReduce
	StWindow
	NumStages
)

// StageName names the MSM pipeline stages.
var StageName = [NumStages]string{StSort: "sort", StAccumulate: "accumulate", StReduce: "reduce", StWindow: "window"}

// Samples holds the timings of one measured quantity over the runs.
type Samples []time.Duration

// Median returns the middle sample (stats.Median).
func (s Samples) Median() time.Duration { return stats.Median(s) }

// PhaseTimes are the times of one proof's phases: Wall is each backend
// call's wall time as groth16.Prove saw it; Upload, Compute and Stage come
// from the GPU MSM engine's own records (host wall time of the scalar
// upload through pinned memory; CUDA-event times of the device pipeline and
// of its stages); Points is each call's size (0: the phase did not run)
// and Bits its window bits.
type PhaseTimes struct {
	Wall, Upload, Compute [NumPhases]time.Duration
	Stage                 [NumPhases][NumStages]time.Duration
	Points, Bits          [NumPhases]int
}

// callPhase maps groth16's phases of backend calls to the benchmark's.
var callPhase = map[groth16.Phase]Phase{
	groth16.PhaseQuotient: PhQuotient, groth16.PhaseMSMA: PhA, groth16.PhaseMSMB1: PhB1, groth16.PhaseMSMB2: PhB2,
	groth16.PhaseMSMLH: PhLH, groth16.PhaseQuotientLH: PhQLH,
}

// Recorder collects the GPU's records of each MSM and quotient made with
// its context (groth16.PhaseInfo.Detail: gpu.MSMTimings, gpu.QuotientTimings),
// to be combined with the Serial wrapper's timed calls. The zero Recorder
// is ready; it is safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	msms  []gpu.MSMTimings
	quots []gpu.QuotientTimings
}

// Context returns ctx with r's groth16.Trace installed (a trace already in
// ctx still receives every phase: groth16.WithTrace composes them).
func (r *Recorder) Context(ctx context.Context) context.Context {
	return groth16.WithTrace(ctx, &groth16.Trace{PhaseDone: r.record})
}

// record keeps the GPU record that info carries, if any; the phases
// themselves come from the Serial wrapper.
func (r *Recorder) record(info groth16.PhaseInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch d := info.Detail.(type) {
	case gpu.MSMTimings:
		r.msms = append(r.msms, d)
	case gpu.QuotientTimings:
		r.quots = append(r.quots, d)
	}
}

// Take returns the times of calls (Serial.TakeCalls) with the GPU records
// made since the last Take, and forgets those.
func (r *Recorder) Take(calls []groth16.PhaseInfo) PhaseTimes {
	r.mu.Lock()
	msms, quots := r.msms, r.quots
	r.msms, r.quots = nil, nil
	r.mu.Unlock()
	return phaseTimesOf(calls, msms, quots)
}

// LastMSM returns the GPU's record of the latest MSM made with r's context.
func (r *Recorder) LastMSM() (gpu.MSMTimings, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.msms) == 0 {
		return gpu.MSMTimings{}, errors.New("msm timings: no MSM reported")
	}
	return r.msms[len(r.msms)-1], nil
}

// phaseTimesOf sums one proof's backend calls (host phases named by their
// groth16 phase) and GPU records per phase. The fused call's
// quotient (a GPU record) is split off its wall into PhQuotient; the B
// pair call's wall is split by the GPU's records: PhB2 gets the G2 MSM's
// wait for its scalars and its device time, PhB1 the rest of the call.
func phaseTimesOf(infos []groth16.PhaseInfo, msms []gpu.MSMTimings, quots []gpu.QuotientTimings) PhaseTimes {
	var t PhaseTimes
	var pair time.Duration
	for _, i := range infos {
		if i.Device != "" {
			continue // the GPU's own sub-phases: its records below carry them with their shape
		}
		if i.Phase == groth16.PhaseMSMBPair {
			pair += i.Duration
			t.Points[PhB1], t.Points[PhB2] = i.Points, i.Points
		}
		if ph, ok := callPhase[i.Phase]; ok {
			t.Wall[ph] += i.Duration
			t.Points[ph] = i.Points
		}
	}
	for _, q := range quots {
		if q.Call == groth16.PhaseQuotientLH {
			t.Wall[PhQuotient] += q.Compute
			t.Wall[PhQLH] -= q.Compute
			t.Points[PhQuotient] = q.Points
		}
	}
	t.Wall[PhB1] += pair
	for _, m := range msms {
		ph, ok := callPhase[m.Call]
		if !ok {
			continue
		}
		if m.Call == groth16.PhaseMSMB2 && pair > 0 {
			t.Wall[PhB1] -= m.Upload + m.Compute
			t.Wall[PhB2] += m.Upload + m.Compute
		}
		t.Upload[ph] += m.Upload
		t.Compute[ph] += m.Compute
		for i, d := range [NumStages]time.Duration{m.Sort, m.Accumulate, m.Reduce, m.Window} {
			t.Stage[ph][i] += d
		}
		t.Bits[ph] = m.Bits
	}
	return t
}

// PhaseSamples are the PhaseTimes of several runs, per phase.
type PhaseSamples struct {
	Wall, Upload, Compute [NumPhases]Samples
	Stage                 [NumPhases][NumStages]Samples
}

// Add appends one run's times.
func (s *PhaseSamples) Add(t PhaseTimes) {
	for ph := range NumPhases {
		s.Wall[ph] = append(s.Wall[ph], t.Wall[ph])
		s.Upload[ph] = append(s.Upload[ph], t.Upload[ph])
		s.Compute[ph] = append(s.Compute[ph], t.Compute[ph])
		for i := range NumStages {
			s.Stage[ph][i] = append(s.Stage[ph][i], t.Stage[ph][i])
		}
	}
}

// SumMSMs returns, per run, the sum over the MSM phases of v.
func SumMSMs(v *[NumPhases]Samples) Samples {
	out := make(Samples, len(v[PhA]))
	for ph := PhA; ph < NumPhases; ph++ {
		for i, d := range v[ph] {
			out[i] += d
		}
	}
	return out
}

// SumStage returns, per run, the sum over the MSM phases of stage i.
func SumStage(v *[NumPhases][NumStages]Samples, i int) Samples {
	var col [NumPhases]Samples
	for ph := range NumPhases {
		col[ph] = v[ph][i]
	}
	return SumMSMs(&col)
}
