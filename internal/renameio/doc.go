// Package renameio writes files so that no reader, and no crash, ever sees
// half of one: the bytes go to a temporary file in the destination's
// directory, which is fsynced, renamed over the destination, and the
// directory is fsynced so that the rename itself survives a power loss
// (golang/go issue 22397; Go's cmd/go/internal/renameio does the same).
//
// It is the one atomic-write helper of the module: the kernel cache, the
// key files, the materialized fatbins, release bundles and the daemon's
// key directory all write through it. It imports only the standard
// library, so toolchain/cas may use it.
package renameio
