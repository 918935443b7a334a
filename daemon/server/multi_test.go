package server

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/daemon/engine"
)

// TestThreeDaemonsOneKilled spreads proofs over daemons on 127.0.0.1-3
// with round_robin and health checks, kills one mid-run, and checks that
// every proof is still delivered and verified (retried elsewhere).
func TestThreeDaemonsOneKilled(t *testing.T) {
	keyDir := t.TempDir() // shared: one development key for all three
	var servers []*testServer
	var addrs []string
	for _, host := range []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"} {
		ts := startServer(t, serverOpts{listen: host + ":0", keyDir: keyDir, engine: engine.Config{Synthesizers: 1}})
		servers = append(servers, ts)
		addrs = append(addrs, ts.addr)
	}
	c := dial(t, "", addrs...)
	var once sync.Once
	rep, err := client.RunLoad(ctxT(t), c, client.Load{Circuit: resolved(t, porepCircuit(1024)), N: 15, Concurrency: 3,
		Seed: 200, RequestPrefix: "multi", Retries: 3,
		Progress: func(done, _ int) {
			if done == 4 {
				once.Do(servers[1].kill)
			}
		}})
	require.NoError(t, err)
	require.Empty(t, rep.Failures)
	require.Len(t, rep.Proofs, 15, "every proof delivered")
	used := map[string]bool{}
	for _, p := range rep.Proofs {
		used[p.Result.GetJobId()] = true
	}
	assert.Len(t, used, 15)
	var done [3]int64
	for i, ts := range servers {
		for _, d := range ts.eng.Status().Devices {
			done[i] += d.JobsDone
		}
	}
	assert.Positive(t, done[0], "daemon 1 proved")
	assert.Positive(t, done[2], "daemon 3 proved")
	assert.Positive(t, done[0]+done[2], "the survivors took the rest")
}
