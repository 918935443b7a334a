// Package gpubench holds the logic of cuzk-bench's local benchmarks, which
// run groth16.Prove and the GPU kernels as a daemon's GPU worker would and
// check every result against the CPU:
//
//   - the prove benchmark (BenchBackend, RunBackend): porep-synth proofs on
//     one backend with one Workspace and one Synthesizer reused from proof
//     to proof, the backend's calls serialized (Serial) so that each phase
//     is timed alone, then again overlapping; every proof verified;
//   - the partition benchmark (NewPartition, RunPartition): groth16.Prove
//     on a synthetic key of a PoRep C2 partition's shape, after a memory
//     plan (PlanMemory, CheckFit) refuses what does not fit, its MSMs and
//     quotient checked against folded references (bench/benchinput);
//   - the kernels benchmark (MSMs, NTTs, MeasureBandwidth, Rate): device
//     and end-to-end times beside modmul-bound estimates.
//
// Timings come from the serialized calls (Serial) and the GPU's record of
// each MSM and quotient, read from groth16's per-call trace (Recorder),
// summed per phase (PhaseTimes). The package prints nothing: cuzk-bench
// formats its results. Functions that take a *driver.Device or a
// GPU backend need a GPU (OpenGPU reports ErrNoGPU where there is none);
// the prove and partition benchmarks run on any groth16.Backend. Values are
// not safe for concurrent use unless their comments say so.
package gpubench
