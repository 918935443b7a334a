package server

import (
	"fmt"
	"net/http"

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
