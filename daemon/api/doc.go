// Package api holds the proving service's protocol: proto/cuzk/v1/proving.proto
// (package cuzk.v1, service ProvingEngine) and, in cuzkv1, the Go code
// generated from it. The generated code is committed; `go run mage.go
// proto` regenerates it with the pinned generators (protogen), and a test
// fails when the committed code differs from a fresh generation.
package api
