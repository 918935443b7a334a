package server

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
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

// TestStatusReportsBuildInfo: GetStatus names this binary's version,
// commit and Go release.
func TestStatusReportsBuildInfo(t *testing.T) {
	d, err := startDaemonHTTP(t, "s3cret", false)
	require.NoError(t, err)
	c := dial(t, "s3cret", d.Addr())
	st, err := c.GetStatus(ctxT(t), &pb.GetStatusRequest{})
	require.NoError(t, err)
	info := buildinfo.Get()
	assert.Equal(t, info.String(), st.GetVersion())
	assert.Contains(t, st.GetVersion(), info.Go)
	assert.NotContains(t, st.GetVersion(), "(devel)", "the module's placeholder version is not reported")
}
