// Package ocitest runs the OCI images of package oci in a real container
// runtime, podman, for tests, as net/http/httptest serves for net/http:
// Load puts an image layout into podman's storage; Run starts a container
// in the foreground and returns its output and exit code; Start runs one
// in the background with ports published on 127.0.0.1, for servers. Both
// use the podman CLI with the settings these hosts need (--runtime runc,
// explicit nofile/nproc ulimits) and, unless told otherwise, a read-only
// root filesystem, no network and no added capabilities. BuildProbe builds
// the probe command (ocitest/probe) that tests mount into a container to
// see what a process sees there.
//
// Available reports whether podman is installed, so tests can skip visibly
// where it is not. Containers are removed when they exit or are stopped;
// distinct calls are safe to run concurrently.
package ocitest
