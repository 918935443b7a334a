// Package ci runs cuzk's builds in the pinned build image and decides where
// a kernel build runs. It holds:
//
//   - the pipelines (Kernels, Test, Release): building the kernels inside
//     the pinned build image, running the tests there, and building the
//     release there (the same `go run mage.go release` as natively, so the
//     same Go code assembles the image), after which the host pushes the
//     exported image layout by digest with go-containerregistry;
//   - their executors: a Dagger engine (the container engine that
//     dagger.io/dagger drives; this is the only package that imports it) or
//     the podman or docker CLI, whichever answers first unless
//     CUZK_EXECUTOR names one, all running the same Plan;
//   - the build image itself: its lock against the pins (LockImage,
//     CheckLock), building it or taking it from the cache (BuildImage), and
//     Repin, which rewrites images.build in toolchain/toolchain.yaml (one
//     line, matched by a regular expression so that the file's comments and
//     layout stay as written) after a deliberate change of the lock;
//   - the one door of a kernel build (ChooseKernelBuild): natively with the
//     pinned nvcc, from the caches alone, or by an executor in the image;
//   - the reports and errors the steps leave (KernelsReport, StepError),
//     the native-against-container comparison of `go run mage.go ci:same`
//     (Same), and CheckGPULog, the GPU runner's check that no GPU test
//     skipped.
//
// Every pipeline is first a Plan: plain data naming the base image (pinned by
// digest), the Go toolchain (pinned version and archive checksum), the
// environment, the cache volumes, the source and read-only mounts, the exec steps (always
// `go run mage.go <target>` inside the container, with CUZK_TOOLCHAIN=native
// and CUZK_IMAGE set to the image reference, so kernel build keys carry the
// image digest) and the exports. Plans are built by pure functions and tested
// without a container runtime; thin layers translate a Plan into Dagger calls
// (dagger.go) or into one `podman run` or `docker run` script (cli.go).
// Kernels, Test and Release look for an executor first and return
// ErrNoExecutor when none answers, so nothing here needs a container runtime
// to compile or to be tested.
//
// Functions are safe for concurrent use; two pipelines exporting into the
// same host directory at the same time will interleave their files.
package ci
