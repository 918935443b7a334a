package server

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
)

// ErrExposedWithoutToken refuses a non-loopback TCP listener with no token.
var ErrExposedWithoutToken = errors.New("a non-loopback TCP address needs a bearer token (set token)")

// UnixPath returns the socket path of a unix address ("unix:PATH" or
// "unix://PATH"), or ok = false.
func UnixPath(addr string) (path string, ok bool) {
	if p, ok := strings.CutPrefix(addr, "unix://"); ok {
		return p, true
	}
	return strings.CutPrefix(addr, "unix:")
}

// CheckExposure returns ErrExposedWithoutToken when addr is a TCP address
// other than loopback and token is empty.
func CheckExposure(addr, token string) error {
	if _, ok := UnixPath(addr); ok || token != "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !ip.IsLoopback() {
		return fmt.Errorf("listen address %q: %w", addr, ErrExposedWithoutToken)
	}
	return nil
}

// CheckHTTPExposure applies CheckExposure's rule to the HTTP listener
// (off when addr is ""): off loopback it needs the token, which HTTP then
// asks for, or public, which serves it to anyone.
func CheckHTTPExposure(addr, token string, public bool) error {
	if addr == "" || public {
		return nil
	}
	if err := CheckExposure(addr, token); err != nil {
		return fmt.Errorf("http_listen: %w, or set http_public to serve /metrics, /healthz and /readyz to anyone", err)
	}
	return nil
}

// Listen opens addr: a unix socket ("unix:PATH", a stale socket file is
// replaced) or TCP.
func Listen(addr string) (net.Listener, error) {
	if path, ok := UnixPath(addr); ok {
		if st, err := os.Lstat(path); err == nil && st.Mode()&os.ModeSocket != 0 {
			// A socket left by a killed daemon: nothing listens on it if dialing fails.
			if c, err := net.Dial("unix", path); err == nil {
				c.Close()
				return nil, fmt.Errorf("listen %s: another daemon is serving on it", addr)
			}
			if err := os.Remove(path); err != nil {
				return nil, fmt.Errorf("listen %s: remove stale socket: %w", addr, err)
			}
		}
		l, err := net.Listen("unix", path)
		if err != nil {
			return nil, fmt.Errorf("listen %s: %w", addr, err)
		}
		return l, nil
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	return l, nil
}

// Addr is l's address as Listen reads it: "unix:PATH" for a socket,
// host:port for TCP.
func Addr(l net.Listener) string {
	if l.Addr().Network() == "unix" {
		return "unix:" + l.Addr().String()
	}
	return l.Addr().String()
}
