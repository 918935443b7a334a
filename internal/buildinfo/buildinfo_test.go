package buildinfo

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var commit = strings.Repeat("0123456789", 4)

func TestFromBuildInfo(t *testing.T) {
	main := debug.Module{Path: Module, Version: "(devel)"}
	vcs := []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: commit}, {Key: "vcs.modified", Value: "true"}}
	stamped := Stamp{Version: "v0.1.0", Commit: strings.Repeat("a", 40)}.String()
	for _, tc := range []struct {
		name  string
		stamp string
		bi    *debug.BuildInfo
		want  Info
	}{
		{"stamp wins over vcs", stamped, &debug.BuildInfo{GoVersion: "go1.26.8", Path: Module + "/cmd/x", Main: main, Settings: vcs},
			Info{Version: "v0.1.0", Commit: strings.Repeat("a", 40), Go: "go1.26.8", Module: Module, Path: Module + "/cmd/x", From: FromStamp}},
		{"vcs of a git checkout", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: main, Settings: vcs},
			Info{Version: Devel, Commit: commit, Modified: true, Go: "go1.26.8", Module: Module, From: FromVCS}},
		{"go install module@version", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: Module, Version: "v0.2.0"}},
			Info{Version: "v0.2.0", Go: "go1.26.8", Module: Module, From: FromModule}},
		{"-buildvcs=false, not stamped", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: main},
			Info{Version: Devel, Go: "go1.26.8", Module: Module, From: FromNone}},
		{"a broken stamp is ignored", "cuzk.buildinfo/v1;version=;commit=;", &debug.BuildInfo{GoVersion: "go1.26.8", Main: main},
			Info{Version: Devel, Go: "go1.26.8", Module: Module, From: FromNone}},
		{"no build info", "", nil, Info{Version: Devel, Go: runtime.Version(), From: FromNone}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, fromBuildInfo(tc.stamp, tc.bi))
		})
	}
}

func TestInfoString(t *testing.T) {
	assert.Equal(t, "v0.1.0 commit "+commit+" go1.26.8", Info{Version: "v0.1.0", Commit: commit, Go: "go1.26.8"}.String())
	assert.Equal(t, "devel commit "+commit+"+modified go1.26.8", Info{Version: Devel, Commit: commit, Modified: true, Go: "go1.26.8"}.String())
	assert.Equal(t, "devel commit unknown go1.26.8", Info{Version: Devel, Go: "go1.26.8"}.String())
}

func TestStampRoundTrip(t *testing.T) {
	for _, s := range []Stamp{{"v0.1.0", commit}, {"dev", ""}, {"v1.2.3-rc.1+build_5", commit}} {
		got, err := Parse(s.String())
		require.NoError(t, err, s)
		assert.Equal(t, s, got)
		flag, err := s.Ldflag()
		require.NoError(t, err)
		assert.Equal(t, "-X "+StampVar+"="+s.String(), flag)
		found, err := FromBinary([]byte("\x00junk" + s.String() + "more junk"))
		require.NoError(t, err)
		assert.Equal(t, s, found)
	}
}

func TestStampRejects(t *testing.T) {
	for _, s := range []Stamp{{"", commit}, {"v1 2", commit}, {"v1'x", commit}, {"-v1", commit}, {"v1;x", commit},
		{strings.Repeat("v", 65), commit}, {"v1", "abc"}, {"v1", strings.Repeat("AB", 20)}} {
		_, err := s.Ldflag()
		assert.Error(t, err, "%+v", s)
	}
	_, err := Parse("")
	assert.ErrorIs(t, err, ErrNoStamp)
	for _, text := range []string{"v0.1.0", "cuzk.buildinfo/v2;version=v1;commit=;", "cuzk.buildinfo/v1;commit=;version=v1;",
		"cuzk.buildinfo/v1;version=v1;commit=;extra"} {
		_, err := Parse(text)
		assert.Error(t, err, text)
	}
}

func TestFromBinaryCounts(t *testing.T) {
	_, err := FromBinary([]byte("cuzk.buildinfo/v1 is the magic; version=v1;commit=;"))
	assert.ErrorIs(t, err, ErrNoStamp)
	two := Stamp{"v1", commit}.String() + "\x00" + Stamp{"v2", commit}.String()
	_, err = FromBinary([]byte(two))
	assert.ErrorContains(t, err, "2 version stamps")
}

// TestStampedBinary builds testdata/stamped as a release does (-trimpath,
// -buildvcs=false, stripped) with and without the stamp: the stamped one
// reports it and carries it exactly once; the other says devel and has
// none.
func TestStampedBinary(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go command: %v", err)
	}
	want := Stamp{Version: "v9.8.7-test", Commit: commit}
	flag, err := want.Ldflag()
	require.NoError(t, err)
	dir := t.TempDir()
	build := func(name, ldflags string) (Info, []byte) {
		out := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid= "+ldflags, "-o", out, "./testdata/stamped")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", b)
		stdout, err := exec.Command(out).Output()
		require.NoError(t, err)
		var info Info
		require.NoError(t, json.Unmarshal(stdout, &info), "%s", stdout)
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		return info, data
	}
	info, data := build("stamped", flag)
	assert.Equal(t, want.Version, info.Version)
	assert.Equal(t, want.Commit, info.Commit)
	assert.Equal(t, FromStamp, info.From)
	assert.Equal(t, Module, info.Module)
	assert.Equal(t, runtime.Version(), info.Go)
	got, err := FromBinary(data)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, 1, bytes.Count(data, []byte(want.String())))

	info, data = build("plain", "")
	assert.Equal(t, Devel, info.Version)
	assert.Empty(t, info.Commit)
	assert.Equal(t, FromNone, info.From)
	_, err = FromBinary(data)
	assert.True(t, errors.Is(err, ErrNoStamp), "an unstamped binary: %v", err)
}
