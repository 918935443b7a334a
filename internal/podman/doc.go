// Package podman runs images in a real container runtime for tests: Run
// starts a container in the foreground and returns its output and exit
// code; Start runs one in the background with ports published on
// 127.0.0.1, for servers. Both use the podman CLI with the settings these
// hosts need (--runtime runc, explicit nofile/nproc ulimits) and, unless
// told otherwise, a read-only root filesystem, no network and no added
// capabilities.
//
// Available reports whether podman is installed, so tests can skip visibly
// where it is not. Containers are removed when they exit or are stopped;
// distinct calls are safe to run concurrently.
package podman
