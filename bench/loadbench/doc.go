// Package loadbench measures the proving daemon end to end: a real daemon
// (assembly.Start) on a unix socket, driven by daemon/client over gRPC.
//
// Run prints, for a circuit and a proof count: throughput and latency
// quantiles at each concurrency, the per-phase means the daemon reports,
// the device busy ratio, the daemon's overhead per proof against calling
// r1cs.Solve, groth16.Prove and groth16.Verify directly on the same
// inputs, and optionally how fast a CRITICAL job submitted behind a queue
// of NORMAL ones finishes, in GPU-job times. Every proof is verified by
// the client.
package loadbench
