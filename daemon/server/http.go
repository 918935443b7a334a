package server

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// HTTPHandler serves /metrics (Prometheus), /healthz (the process is up)
// and /readyz (it can prove: devices found, kernels loaded, not draining).
func (s *Server) HTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.cfg.Gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if s.cfg.Engine.Draining() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		if s.cfg.Ready != nil {
			if err := s.cfg.Ready(); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintf(w, "ready: backend %s\n", s.cfg.Backend)
	})
	return mux
}

// probePaths are the HTTP paths served without the token: liveness and
// readiness probes (a kubelet, a load balancer) carry no credentials, as
// the gRPC health service needs none. They say up/ready and the backend,
// nothing of jobs or keys.
var probePaths = map[string]bool{"/healthz": true, "/readyz": true}

// HTTPAuth asks for the bearer token (when the server has one) on every
// path but the probes' (probePaths).
func (s *Server) HTTPAuth(next http.Handler) http.Handler {
	if s.cfg.Token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !probePaths[r.URL.Path] {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.cfg.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", "Bearer")
				http.Error(w, "missing or invalid bearer token (Authorization: Bearer …)", http.StatusUnauthorized)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
