// Package server is the gRPC service cuzk.v1.ProvingEngine over the job
// engine (daemon/engine, the daemon's scheduler of proof jobs): it validates
// requests (InvalidArgument naming the field), authenticates callers with a
// bearer token, maps the job engine's errors to status codes (full queue:
// ResourceExhausted; draining: Unavailable; unknown job: NotFound; a failed
// job: Internal naming the step; a cancelled job: Canceled), and serves
// the standard grpc.health.v1 service, server reflection, and over HTTP
// /metrics, /healthz and /readyz.
//
// Listen chooses the listener: "unix:PATH" or "unix://PATH" for a unix
// socket, otherwise a TCP host:port. CheckExposure refuses a non-loopback
// TCP address without a token.
package server
