package assembly

import (
	"github.com/cuzk-dev/cuzk/internal/stats"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemoryLimitFromOptions(t *testing.T) {
	o := DefaultConfig()
	assert.Equal(t, int64(90<<30), memoryLimit(o, 90<<30, false), "the host budget")
	assert.Zero(t, memoryLimit(o, 90<<30, true), "GOMEMLIMIT, read by the runtime, wins over the derived limit")
	o.MemoryLimit = 1 << 30
	assert.Equal(t, int64(1<<30), memoryLimit(o, 90<<30, true), "an explicit limit wins")
}

func TestBudgetsDerivedFromTheMachine(t *testing.T) {
	m := Machine{Bytes: 100 << 30, Source: "test"}
	cases := []struct {
		name           string
		host, key, job int64
		want           Budgets
	}{
		{"none set", 0, 0, 0, Budgets{Host: 90 << 30, Key: 90 << 30, Job: 90 << 30}},
		{"host set", 10 << 30, 0, 0, Budgets{Host: 10 << 30, Key: 10 << 30, Job: 10 << 30}},
		{"key set", 0, 60 << 30, 0, Budgets{Host: 90 << 30, Key: 60 << 30, Job: 90 << 30}},
		{"job set", 0, 0, 30 << 30, Budgets{Host: 90 << 30, Key: 90 << 30, Job: 30 << 30}},
		{"all set", 1 << 30, 2 << 30, 3 << 30, Budgets{Host: 1 << 30, Key: 2 << 30, Job: 3 << 30}},
	}
	for _, tc := range cases {
		o := Config{HostBudget: stats.Bytes(tc.host), HostKeyBudget: stats.Bytes(tc.key), HostJobBudget: stats.Bytes(tc.job)}
		b, err := budgetsOf(o, m)
		require.NoError(t, err, tc.name)
		b.Derived = ""
		assert.Equal(t, tc.want, b, tc.name)
	}
	_, err := budgetsOf(Config{HostBudget: -1}, m)
	assert.ErrorContains(t, err, "negative")
}

func TestReadMachineTakesTheCgroupLimit(t *testing.T) {
	meminfo := &fstest.MapFile{Data: []byte("MemTotal:       24683748 kB\nMemFree: 1 kB\n")}
	cases := []struct {
		name   string
		files  fstest.MapFS
		bytes  int64
		source string
	}{
		{"meminfo only", fstest.MapFS{"proc/meminfo": meminfo}, 24683748 << 10, "/proc/meminfo MemTotal"},
		{"cgroup v2", fstest.MapFS{"proc/meminfo": meminfo, "proc/self/cgroup": {Data: []byte("0::/job\n")},
			"sys/fs/cgroup/job/memory.max": {Data: []byte("4294967296\n")}}, 4 << 30, "cgroup /sys/fs/cgroup/job/memory.max"},
		{"cgroup v2 no limit", fstest.MapFS{"proc/meminfo": meminfo, "proc/self/cgroup": {Data: []byte("0::/\n")},
			"sys/fs/cgroup/memory.max": {Data: []byte("max\n")}}, 24683748 << 10, "/proc/meminfo MemTotal"},
		{"cgroup v1 at the root", fstest.MapFS{"proc/meminfo": meminfo,
			"proc/self/cgroup":                           {Data: []byte("5:devices:/\n4:memory:/process_api/f2\n0::/\n")},
			"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("2147483648\n")}}, 2 << 30, "cgroup /sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{"cgroup v1 unlimited", fstest.MapFS{"proc/meminfo": meminfo, "proc/self/cgroup": {Data: []byte("4:memory:/\n")},
			"sys/fs/cgroup/memory/memory.limit_in_bytes": {Data: []byte("9223372036854771712\n")}}, 24683748 << 10, "/proc/meminfo MemTotal"},
	}
	for _, tc := range cases {
		m, err := ReadMachine(tc.files)
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.bytes, m.Bytes, tc.name)
		assert.Equal(t, tc.source, m.Source, tc.name)
	}
	_, err := ReadMachine(fstest.MapFS{})
	assert.ErrorContains(t, err, "meminfo")
	assert.Equal(t, int64(3<<30), Machine{Bytes: 4 << 30}.Budget(), "at least 1 GiB of margin")
	assert.Equal(t, int64(1<<29), Machine{Bytes: 1 << 30}.Budget(), "at most half")
}
