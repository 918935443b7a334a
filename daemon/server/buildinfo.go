package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cuzk-dev/cuzk/internal/buildinfo"
)

// BuildInfoCollector returns the gauge cuzk_build_info{version,commit,go} 1,
// the convention for joining a binary's identity to its other series
// (as go_build_info): commit is "" when unknown, and carries "+modified"
// for a build from a changed checkout.
func BuildInfoCollector(info buildinfo.Info) prometheus.Collector {
	commit := info.Commit
	if commit != "" && info.Modified {
		commit += "+modified"
	}
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cuzk_build_info",
		Help: "The daemon's version, source commit and Go release; always 1."}, []string{"version", "commit", "go"})
	g.WithLabelValues(info.Version, commit, info.Go).Set(1)
	return g
}
