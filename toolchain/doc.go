// Package toolchain holds cuzk's pinned build toolchain: the typed pins loaded
// from toolchain.yaml (embedded defaults, an optional override file, CUZK_*
// environment variables); the identity that every kernel build key includes,
// which the pins give (PinnedIdentity), so keys need no local nvcc; detection
// and verification of the local nvcc; the remote kernel cache's settings and
// credentials (OpenRemote); installation of the pinned native toolchain on
// Debian-family hosts; and the choice between a native and a container build.
//
// It is the only package besides the daemon's main that reads configuration
// (viper); everything it hands inward is plain values.
package toolchain
