package server

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/buildinfo"
)

func TestBuildInfoMetric(t *testing.T) {
	commit := strings.Repeat("c", 40)
	for _, tc := range []struct {
		info buildinfo.Info
		want map[string]string
	}{
		{buildinfo.Info{Version: "v0.1.0", Commit: commit, Go: "go1.26.8"}, map[string]string{"version": "v0.1.0", "commit": commit, "go": "go1.26.8"}},
		{buildinfo.Info{Version: "devel", Commit: commit, Modified: true, Go: "go1.26.8"},
			map[string]string{"version": "devel", "commit": commit + "+modified", "go": "go1.26.8"}},
		{buildinfo.Info{Version: "devel", Go: "go1.26.8"}, map[string]string{"version": "devel", "commit": "", "go": "go1.26.8"}},
	} {
		reg := prometheus.NewRegistry()
		reg.MustRegister(BuildInfoCollector(tc.info))
		mfs, err := reg.Gather()
		require.NoError(t, err)
		require.Len(t, mfs, 1)
		assert.Equal(t, "cuzk_build_info", mfs[0].GetName())
		require.Len(t, mfs[0].GetMetric(), 1)
		m := mfs[0].GetMetric()[0]
		assert.Equal(t, 1.0, m.GetGauge().GetValue())
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		assert.Equal(t, tc.want, got)
	}
}
