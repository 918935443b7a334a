package release

import (
	"context"
	"debug/buildinfo"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	cuzkbuild "github.com/cuzk-dev/cuzk/internal/buildinfo"
)

// stampedRelease builds a release of the hello fixture turned into a cuzk
// module: go.mod says github.com/cuzk-dev/cuzk, internal/buildinfo is
// copied in, and the stand-in cuzk-daemon links it and prints
// buildinfo.Get() for "version". Its binary carries the stamp as the real
// daemon's does. (A pure Go main: with a warm build cache, a second or two.)
func stampedRelease(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "src")
	copyTree(t, filepath.Join("testdata", "hello"), root)
	gomod := mustRead(t, filepath.Join(root, "go.mod"))
	gomod = []byte(strings.Replace(string(gomod), "module example.com/hello", "module "+cuzkbuild.Module, 1))
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), gomod, 0o644))
	bi := filepath.Join(root, "internal", "buildinfo")
	require.NoError(t, os.MkdirAll(bi, 0o755))
	for _, f := range []string{"doc.go", "buildinfo.go", "stamp.go"} {
		b := mustRead(t, filepath.Join("..", "..", "internal", "buildinfo", f))
		require.NoError(t, os.WriteFile(filepath.Join(bi, f), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "cmd", "cuzk-daemon", "identity.go"), []byte(identityMain), 0o644))
	o := helloOptions(t, root)
	o.Packages = []string{"./cmd/cuzk-daemon"}
	d, err := Make(context.Background(), o, testBase(), testSource)
	require.NoError(t, err)
	return d.Dir
}

// identityMain is added to the stand-in daemon: "version" prints
// buildinfo.Get() as JSON.
const identityMain = `package main

import (
	"encoding/json"
	"os"

	"github.com/cuzk-dev/cuzk/internal/buildinfo"
)

func init() {
	if len(os.Args) > 1 && os.Args[1] == "version" {
		_ = json.NewEncoder(os.Stdout).Encode(buildinfo.Get())
		os.Exit(0)
	}
}
`

// TestIdentityStampedIntoBinaries: Make stamps the release version and the
// source commit into the binary, which reports them, and Verify finds them
// equal to the provenance's.
func TestIdentityStampedIntoBinaries(t *testing.T) {
	dir := stampedRelease(t)
	v, err := Verify(dir)
	require.NoError(t, err)
	s, err := cuzkbuild.FromBinary(v.Files["bin/cuzk-daemon"])
	require.NoError(t, err)
	assert.Equal(t, cuzkbuild.Stamp{Version: "v0.0.1-test", Commit: testSource.Commit}, s)

	bin := filepath.Join(t.TempDir(), "cuzk-daemon")
	require.NoError(t, os.WriteFile(bin, v.Files["bin/cuzk-daemon"], 0o755))
	out, err := exec.Command(bin, "version").Output()
	require.NoError(t, err)
	var info cuzkbuild.Info
	require.NoError(t, json.Unmarshal(out, &info), "%s", out)
	assert.Equal(t, "v0.0.1-test", info.Version)
	assert.Equal(t, testSource.Commit, info.Commit)
	assert.Equal(t, cuzkbuild.FromStamp, info.From)
	gbi, err := buildinfo.ReadFile(bin)
	require.NoError(t, err)
	for _, st := range gbi.Settings {
		assert.NotEqual(t, "-ldflags", st.Key, "-trimpath keeps the flags (and the stamp) out of the build info")
	}
}

// TestVerifyCatchesIdentityForgeries: a provenance whose commit fields were
// all changed together (SHA256SUMS regenerated) still disagrees with the
// commit the binaries carry; Verify names the binary and the field.
func TestVerifyCatchesIdentityForgeries(t *testing.T) {
	other := strings.Repeat("d", 40)
	for _, tc := range []struct {
		name string
		edit func(def map[string]any)
		want string
	}{
		{"another commit, consistently", func(def map[string]any) {
			ext := def["externalParameters"].(map[string]any)
			src := strings.Replace(ext["source"].(string), testSource.Commit, other, 1)
			ext["commit"], ext["source"] = other, src
			dep := gitDep(def)
			dep["digest"].(map[string]any)["gitCommit"], dep["uri"] = other, src
		}, `bin/cuzk-daemon: embedded commit "` + testSource.Commit + `", externalParameters.commit "` + other + `"`},
		{"no commit at all, consistently", func(def map[string]any) {
			ext := def["externalParameters"].(map[string]any)
			ext["commit"], ext["source"] = "", noAssertion
			var keep []any
			for _, d := range def["resolvedDependencies"].([]any) {
				if _, git := d.(map[string]any)["digest"].(map[string]any)["gitCommit"]; !git {
					keep = append(keep, d)
				}
			}
			def["resolvedDependencies"] = keep
		}, `bin/cuzk-daemon: embedded commit "` + testSource.Commit + `", externalParameters.commit ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := stampedRelease(t)
			editJSON(t, only(t, dir, "*"+ProvenanceSuffix), provenanceEdit(tc.edit))
			resum(t, dir)
			_, err := Verify(dir)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), ProvenanceSuffix, "the error names the provenance file")
		})
	}
}

// TestCheckIdentity covers each way a binary's stamp can disagree, on
// synthetic bytes.
func TestCheckIdentity(t *testing.T) {
	commit := strings.Repeat("a", 40)
	stamp := func(v, c string) []byte {
		return []byte("\x7fELF..." + cuzkbuild.Stamp{Version: v, Commit: c}.String() + "...")
	}
	cuzkMain := &debug.BuildInfo{Main: debug.Module{Path: cuzkbuild.Module}}
	fixture := &debug.BuildInfo{Main: debug.Module{Path: "example.com/hello"}}
	for _, tc := range []struct {
		name   string
		data   []byte
		bi     *debug.BuildInfo
		commit string // the provenance's
		want   string // "" for no error
	}{
		{"agrees", stamp("v0.1.0", commit), cuzkMain, commit, ""},
		{"agrees, commit unknown on both sides", stamp("v0.1.0", ""), cuzkMain, "", ""},
		{"other version", stamp("v0.0.9", commit), cuzkMain, commit, `bin/x: embedded version "v0.0.9", externalParameters.version "v0.1.0"`},
		{"other commit", stamp("v0.1.0", strings.Repeat("b", 40)), cuzkMain, commit, `bin/x: embedded commit "` + strings.Repeat("b", 40) + `"`},
		{"stamped without a commit", stamp("v0.1.0", ""), cuzkMain, commit, `bin/x: embedded commit "", externalParameters.commit "` + commit + `"`},
		{"a cuzk binary without a stamp", []byte("\x7fELF"), cuzkMain, commit, "bin/x: no embedded version and commit"},
		{"a foreign binary without a stamp", []byte("\x7fELF"), fixture, commit, ""},
		{"a foreign binary with a wrong stamp", stamp("v9", commit), fixture, commit, `embedded version "v9"`},
		{"two stamps", append(stamp("v0.1.0", commit), stamp("v0.1.0", commit)...), cuzkMain, commit, "bin/x: buildinfo: 2 version stamps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkIdentity("bin/x", tc.data, tc.bi, "v0.1.0", tc.commit)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// TestStampedArgs: the stamp joins the release's one -ldflags.
func TestStampedArgs(t *testing.T) {
	got := stampedArgs(BuildArgs("out", "./cmd/x"), "-X a.b=c")
	var ld []string
	for _, a := range got {
		if strings.HasPrefix(a, "-ldflags") {
			ld = append(ld, a)
		}
	}
	require.Len(t, ld, 1, "%q", got)
	assert.True(t, strings.HasSuffix(ld[0], " -X a.b=c"), ld[0])
	assert.Equal(t, []string{"build", "-ldflags=-X a.b=c", "-o", "x"}, stampedArgs([]string{"build", "-o", "x"}, "-X a.b=c"))
}
