package buildbench

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

func TestParseDeps(t *testing.T) {
	out := []byte(`out/a.fatbin: #deps 4, deps mtime 1733140000000000000 (VALID)
    cuda/kernels/a.cu
    /usr/include/cuda_runtime.h
    cuda/include/fx/../fx/common.cuh
    cuda/include/fx/only_a.cuh

out/b.fatbin: #deps 1, deps mtime 1733140000000000001 (STALE)
    cuda/kernels/b.cu

`)
	got, err := parseDeps(out)
	require.NoError(t, err)
	assert.Equal(t, map[string][]string{
		"out/a.fatbin": {"cuda/include/fx/common.cuh", "cuda/include/fx/only_a.cuh", "cuda/kernels/a.cu"},
		"out/b.fatbin": {"cuda/kernels/b.cu"},
	}, got)

	for _, bad := range []string{"    orphan.cuh\n", "out/a.fatbin deps\n"} {
		_, err := parseDeps([]byte(bad))
		assert.Error(t, err, bad)
	}
}

func TestOracleCountsNewStatesAndChanges(t *testing.T) {
	o := newOracle()
	steps := []struct {
		keys             map[string]string
		changed, minimum int
	}{
		{map[string]string{"a": "A0", "b": "B0"}, 2, 2}, // cold
		{map[string]string{"a": "A0", "b": "B0"}, 0, 0}, // no-op
		{map[string]string{"a": "A1", "b": "B0"}, 1, 1}, // edit
		{map[string]string{"a": "A0", "b": "B0"}, 1, 0}, // revert: changed, but built before
		{map[string]string{"a": "A1", "b": "B1"}, 2, 1}, // A1 seen, B1 new
	}
	for i, s := range steps {
		changed, minimum := o.observe(s.keys)
		assert.Equal(t, []int{s.changed, s.minimum}, []int{changed, minimum}, "step %d", i)
	}
}

func TestStateKeysFollowContentNotTime(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, rel), []byte(s), 0o644))
	}
	write("k/a.cu", "a")
	write("i/h.cuh", "h")
	cmds := map[string]string{"a": "nvcc -o out/a.fatbin k/a.cu"}
	deps := map[string][]string{"a": {"i/h.cuh", "k/a.cu"}}
	k0, err := stateKeys(root, cmds, deps)
	require.NoError(t, err)

	later := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(root, "i/h.cuh"), later, later))
	k1, err := stateKeys(root, cmds, deps)
	require.NoError(t, err)
	assert.Equal(t, k0, k1, "a touch is not a new state")

	write("i/h.cuh", "h2")
	k2, err := stateKeys(root, cmds, deps)
	require.NoError(t, err)
	assert.NotEqual(t, k0["a"], k2["a"], "a header's bytes are part of the state")

	k3, err := stateKeys(root, map[string]string{"a": cmds["a"] + " -lineinfo"}, deps)
	require.NoError(t, err)
	assert.NotEqual(t, k2["a"], k3["a"], "the command line is part of the state")

	_, err = stateKeys(root, cmds, map[string][]string{"a": {"gone.cuh"}})
	assert.ErrorContains(t, err, "gone.cuh")
}

func TestChoose(t *testing.T) {
	sources := map[string]string{"a": "k/a.cu", "b": "k/b.cu", "c": "k/c.cu", "d": "k/d.cu"}
	deps := map[string][]string{
		"a": {"i/all.cuh", "i/ab.cuh", "k/a.cu"},
		"b": {"i/all.cuh", "i/ab.cuh", "i/bcd.cuh", "k/b.cu"},
		"c": {"i/all.cuh", "i/bcd.cuh", "k/c.cu"},
		"d": {"i/all.cuh", "i/bcd.cuh", "k/d.cu"},
	}
	cases := []struct {
		name string
		cost map[string]time.Duration
		want Picks
	}{
		{"cheapest 3-unit header, source outside B's header", map[string]time.Duration{"a": 1, "b": 2, "c": 3, "d": 100},
			Picks{Header: "i/bcd.cuh", HeaderUnits: []string{"b", "c", "d"}, SwitchHeader: "i/ab.cuh", SwitchSource: "k/c.cu"}},
		{"tie goes to the smaller name", map[string]time.Duration{"a": 0, "b": 2, "c": 3, "d": 100},
			Picks{Header: "i/all.cuh", HeaderUnits: []string{"a", "b", "c", "d"}, SwitchHeader: "i/ab.cuh", SwitchSource: "k/c.cu"}},
		{"second header avoids the first", map[string]time.Duration{"a": 50, "b": 50, "c": 1, "d": 1},
			Picks{Header: "i/bcd.cuh", HeaderUnits: []string{"b", "c", "d"}, SwitchHeader: "i/ab.cuh", SwitchSource: "k/c.cu"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := choose(deps, sources, tc.cost)
			require.NoError(t, err)
			assert.Equal(t, tc.want, p)
		})
	}

	t.Run("every unit uses B's header", func(t *testing.T) {
		three := map[string][]string{"a": {"i/x.cuh", "i/y.cuh", "k/a.cu"}, "b": {"i/x.cuh", "i/y.cuh", "k/b.cu"}, "c": {"i/x.cuh", "i/y.cuh", "k/c.cu"}}
		p, err := choose(three, map[string]string{"a": "k/a.cu", "b": "k/b.cu", "c": "k/c.cu"}, map[string]time.Duration{"a": 3, "b": 1, "c": 2})
		require.NoError(t, err)
		assert.Equal(t, Picks{Header: "i/x.cuh", HeaderUnits: []string{"a", "b", "c"}, SwitchHeader: "i/y.cuh", SwitchSource: "k/b.cu"}, p)
	})
	t.Run("no shared header", func(t *testing.T) {
		_, err := choose(map[string][]string{"a": {"i/x.cuh", "k/a.cu"}}, map[string]string{"a": "k/a.cu"}, nil)
		assert.ErrorContains(t, err, "no header is shared by 3 units")
	})
}

func TestNinjaFileRunsTheEngineCommands(t *testing.T) {
	root := t.TempDir()
	n := &ninjaTree{root: root, nvcc: "/opt/my nvcc/bin/nvcc"}
	units := []kbuild.Unit{{Name: "a", Source: "cuda/kernels/a.cu",
		Args: []string{"-fatbin", "-O3", "-gencode", "arch=compute_90,code=sm_90", "-I", "cuda/include", "-o", kbuild.OutPlaceholder, "cuda/kernels/a.cu"}}}
	require.NoError(t, n.generate(units))
	b, err := os.ReadFile(filepath.Join(root, "build.ninja"))
	require.NoError(t, err)
	want := "'/opt/my nvcc/bin/nvcc' -fatbin -O3 -gencode arch=compute_90,code=sm_90 -I cuda/include -o out/a.fatbin cuda/kernels/a.cu -MD -MF out/a.fatbin.d"
	assert.Equal(t, want, n.cmds["a"])
	assert.Contains(t, string(b), "build out/a.fatbin: nvcc cuda/kernels/a.cu\n  cmd = "+want+"\n")
	assert.Contains(t, string(b), "deps = gcc")
	assert.Equal(t, "a", n.names["out/a.fatbin"])
}

func TestEscaping(t *testing.T) {
	assert.Equal(t, "plain/path-1.cu", shellQuote("plain/path-1.cu"))
	assert.Equal(t, `'it'\''s here'`, shellQuote("it's here"))
	assert.Equal(t, "''", shellQuote(""))
	assert.Equal(t, "a$ b$:c$$d", ninjaPath("a b:c$d"))
	assert.Equal(t, "x $$y", ninjaValue("x $y"))
}

func TestSettleWaitsPastTheNewestOutput(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(root, "out", "a.fatbin")
	require.NoError(t, os.MkdirAll(filepath.Dir(out), 0o755))
	require.NoError(t, os.WriteFile(out, nil, 0o644))
	ahead := time.Now().Add(300 * time.Millisecond) // an output stamped ahead of the clock
	require.NoError(t, os.Chtimes(out, ahead, ahead))

	require.NoError(t, settle(root, "out", 10*time.Second))
	edit := filepath.Join(root, "a.cu")
	require.NoError(t, os.WriteFile(edit, []byte("edit"), 0o644))
	info, err := os.Stat(edit)
	require.NoError(t, err)
	assert.True(t, info.ModTime().After(ahead), "an edit after settle is newer than every output (%s vs %s)", info.ModTime(), ahead)
	assert.NoFileExists(t, filepath.Join(root, clockProbe), "the probe is removed")

	far := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(out, far, far))
	err = settle(root, "out", 20*time.Millisecond)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not pass the newest output under out")

	require.NoError(t, settle(t.TempDir(), "out", time.Second), "no outputs yet (before the cold build) is no wait")
}

func TestConfigRejectsBadValues(t *testing.T) {
	for field, cfg := range map[string]Config{
		"Archs":    {Archs: []string{}},
		"Flag":     {Flag: "lineinfo"},
		"Jobs":     {Jobs: -1},
		"NoOpRuns": {NoOpRuns: -3},
		"Layout":   {Layout: kbuild.Layout{Kernels: "k"}},
	} {
		t.Run(field, func(t *testing.T) {
			_, err := cfg.withDefaults()
			require.Error(t, err)
			assert.Contains(t, err.Error(), "Config."+field)
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	// sh stands in for ninja, which withDefaults looks up.
	cfg, err := Config{Ninja: "sh"}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, DefaultArchs, cfg.Archs)
	assert.Equal(t, DefaultFlag, cfg.Flag)
	assert.Equal(t, runtime.NumCPU(), cfg.Jobs)
	assert.Equal(t, 15, cfg.NoOpRuns)
	assert.Equal(t, kbuild.DefaultLayout, cfg.Layout)
	assert.True(t, filepath.IsAbs(cfg.Ninja), cfg.Ninja)
	assert.NotNil(t, cfg.Log)
}
