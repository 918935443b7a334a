// Package nginx runs a private nginx as a WebDAV file server on 127.0.0.1,
// in a directory of its own, with a generated configuration: PUT enabled
// (dav_methods PUT, create_full_put_path on) and an access log that callers
// read back. It is the real server the remote kernel cache is tested and
// benchmarked against (the layout of a Bazel HTTP cache is plain files
// under ac/ and cas/), and it never depends on a system nginx service.
package nginx
