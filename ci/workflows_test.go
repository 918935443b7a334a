package ci

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/cuzk-dev/cuzk/ci/release"
	"github.com/cuzk-dev/cuzk/toolchain"
)

type workflow struct {
	On   map[string]any    `yaml:"on"`
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		RunsOn any               `yaml:"runs-on"`
		Env    map[string]string `yaml:"env"`
		Steps  []struct {
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
			Env  map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, name string) (workflow, string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", ".github", "workflows", name))
	require.NoError(t, err)
	var w workflow
	require.NoError(t, yaml.Unmarshal(raw, &w), name)
	return w, string(raw)
}

// daggerSDKVersion reads dagger.io/dagger's version from go.mod.
func daggerSDKVersion(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "go.mod"))
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*dagger\.io/dagger v(\S+)`).FindSubmatch(b)
	require.NotNil(t, m, "dagger.io/dagger in go.mod")
	return string(m[1])
}

var pinnedUse = regexp.MustCompile(`^\s*(- )?uses: [\w.-]+/[\w.-]+@[0-9a-f]{40} # v\d+(\.\d+)*$`)

func TestWorkflowsArePinned(t *testing.T) {
	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	sdk := daggerSDKVersion(t)
	for _, name := range []string{"ci.yml", "release.yml"} {
		t.Run(name, func(t *testing.T) {
			w, raw := readWorkflow(t, name)
			assert.Equal(t, pins.Go, w.Env["GO_VERSION"], "setup-go at the pinned Go")
			assert.Equal(t, sdk, w.Env["DAGGER_VERSION"], "dagger CLI matches the Go SDK in go.mod")
			for i, line := range strings.Split(raw, "\n") {
				if strings.Contains(line, "uses:") {
					assert.Regexp(t, pinnedUse, line, "%s:%d: action pinned by commit SHA with its tag", name, i+1)
				}
			}
			for job, j := range w.Jobs {
				for _, s := range j.Steps {
					if strings.HasPrefix(s.Uses, "actions/setup-go@") {
						assert.Equal(t, "${{ env.GO_VERSION }}", s.With["go-version"], job)
					}
					if strings.HasPrefix(s.Uses, "dagger/dagger-for-github@") {
						assert.Equal(t, "${{ env.DAGGER_VERSION }}", s.With["version"], job)
						assert.Equal(t, "run", s.With["verb"], job)
						assert.Equal(t, "container", s.Env[toolchain.EnvToolchain], "%s: mage takes the Dagger path", job)
					}
				}
			}
		})
	}
}

func TestCIWorkflowJobs(t *testing.T) {
	w, _ := readWorkflow(t, "ci.yml")
	require.Contains(t, w.Jobs, "test")
	require.Contains(t, w.Jobs, "dagger")
	require.Contains(t, w.Jobs, "gpu")
	runs := func(job string) string {
		var all []string
		for _, s := range w.Jobs[job].Steps {
			all = append(all, s.Run, s.With["args"])
		}
		return strings.Join(all, "\n")
	}
	assert.Contains(t, runs("test"), "go run mage.go test")
	assert.Contains(t, runs("dagger"), "go run mage.go test")
	assert.Contains(t, runs("gpu"), "go run mage.go kernels")
	assert.Contains(t, runs("gpu"), "go test -v -count=1 -timeout 30m ./cuda/... ./prover/gpu/...")
	labels, ok := w.Jobs["gpu"].RunsOn.([]any)
	require.True(t, ok, "gpu runs-on is a label list")
	assert.Contains(t, labels, "self-hosted")
	assert.Contains(t, labels, "gpu")
	assert.Equal(t, "native", w.Jobs["gpu"].Env[toolchain.EnvToolchain])
}

func TestReleaseWorkflow(t *testing.T) {
	w, _ := readWorkflow(t, "release.yml")
	push, ok := w.On["push"].(map[string]any)
	require.True(t, ok, "release runs on push")
	assert.Equal(t, []any{"v*"}, push["tags"])
	var found bool
	for _, s := range w.Jobs["release"].Steps {
		if strings.HasPrefix(s.Uses, "dagger/dagger-for-github@") {
			found = true
			assert.Equal(t, "go run mage.go release", s.With["args"])
			assert.Contains(t, s.Env, release.EnvVersion)
			assert.Contains(t, s.Env, EnvImageAddress)
		}
	}
	assert.True(t, found, "release runs through Dagger")
}
