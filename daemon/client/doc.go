// Package client dials cuzk daemons and drives them: one address, a DNS
// name over many daemons, or a list of addresses, spread with gRPC's
// round_robin balancer and client-side health checks (a daemon that
// drains or dies stops receiving jobs). RunLoad submits a stream of
// proofs at a given concurrency, verifies every proof with the verifying
// key fetched from the daemon, and reports throughput, latency quantiles
// and the per-phase breakdown (Report, and Summary for printing). JSON
// writes the protocol's messages for scripts (numbers as numbers, enums by
// short name), as the cuzk command's -o json does.
package client
