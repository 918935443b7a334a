// Package api holds the proving service's protocol: proto/cuzk/v1/proving.proto
// (package cuzk.v1, service ProvingEngine) and, in cuzkv1, the Go code
// generated from it. The generated code is committed; `go run mage.go
// proto` regenerates it with the pinned generators (protogen), and a test
// fails when the committed code differs from a fresh generation.
//
// ProvingEngine is the service's wire name (in every method's full name,
// /cuzk.v1.ProvingEngine/SubmitProof, and in the health service's entry),
// kept as it is so that clients built against it keep working. It names
// the protocol, not a part of the daemon: daemon/server serves it over the
// job engine, daemon/engine.
package api
