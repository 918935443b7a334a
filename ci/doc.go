// Package ci holds cuzk's Dagger pipelines: building the kernels inside the
// pinned build image, running the tests there, and building the release
// there (the same `go run mage.go release` as natively, so the same Go code
// assembles the image), after which the host pushes the exported image
// layout by digest with go-containerregistry. It is the only package that
// imports dagger.io/dagger. CheckGPULog is the GPU runner's check that no
// GPU test skipped.
//
// Every pipeline is first a Plan: plain data naming the base image (pinned by
// digest), the Go toolchain (pinned version and archive checksum), the
// environment, the cache volumes, the source and read-only mounts, the exec steps (always
// `go run mage.go <target>` inside the container, with CUZK_TOOLCHAIN=native
// and CUZK_IMAGE set to the image reference, so kernel build keys carry the
// image digest) and the exports. Plans are built by pure functions and tested
// without an engine; a thin layer (dagger.go) translates a Plan into Dagger
// calls. Kernels, Test and Release check for an engine first and return
// ErrNoEngine when none is reachable, so nothing here needs a container
// runtime to compile or to be tested.
//
// Functions are safe for concurrent use; two pipelines exporting into the
// same host directory at the same time will interleave their files.
package ci
