package ci

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rhysd/actionlint"
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
		Needs  string            `yaml:"needs"`
		Uses   string            `yaml:"uses"`
		Env    map[string]string `yaml:"env"`
		Steps  []struct {
			Name string            `yaml:"name"`
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

// localWorkflow is a reusable workflow of this repository (pinned by the
// commit that calls it).
var localWorkflow = regexp.MustCompile(`^\s*uses: \./\.github/workflows/[\w.-]+\.yml$`)

// pinnedImage is a container image pinned by digest.
var pinnedImage = regexp.MustCompile(`^\s*image: [\w./-]+(:[\w.-]+)?@sha256:[0-9a-f]{64}$`)

func TestWorkflowsArePinned(t *testing.T) {
	pins, err := toolchain.Load(nil)
	require.NoError(t, err)
	sdk := daggerSDKVersion(t)
	for _, name := range []string{"ci.yml", "release.yml", "build-image.yml"} {
		t.Run(name, func(t *testing.T) {
			w, raw := readWorkflow(t, name)
			assert.Equal(t, pins.Go, w.Env["GO_VERSION"], "setup-go at the pinned Go")
			if name != "build-image.yml" {
				assert.Equal(t, sdk, w.Env["DAGGER_VERSION"], "dagger CLI matches the Go SDK in go.mod")
			}
			for i, line := range strings.Split(raw, "\n") {
				if strings.Contains(line, "uses:") && !localWorkflow.MatchString(line) {
					assert.Regexp(t, pinnedUse, line, "%s:%d: action pinned by commit SHA with its tag", name, i+1)
				}
				if strings.HasPrefix(strings.TrimSpace(line), "image: ") {
					assert.Regexp(t, pinnedImage, line, "%s:%d: container image pinned by digest", name, i+1)
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

// workflowFiles lists .github/workflows/*.yml.
func workflowFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", ".github", "workflows", "*.yml"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// TestWorkflowsLint runs actionlint (as a library) over every workflow:
// syntax, expressions, job and step keys, action inputs, runner labels.
// Shell scripts are not linted (no shellcheck): runs are only mage calls.
func TestWorkflowsLint(t *testing.T) {
	var out strings.Builder
	l, err := actionlint.NewLinter(&out, &actionlint.LinterOptions{Oneline: true, LogWriter: io.Discard,
		ConfigFile: filepath.Join("..", ".github", "actionlint.yaml")}) // declares the self-hosted "gpu" label
	require.NoError(t, err)
	files := workflowFiles(t)
	errs, err := l.LintFiles(files, nil)
	require.NoError(t, err)
	for _, e := range errs {
		t.Errorf("%s:%d:%d: %s [%s]", e.Filepath, e.Line, e.Column, e.Message, e.Kind)
	}
	assert.Empty(t, errs, out.String())
}

// mageCommand is the one shape a workflow command may have: a mage target
// with optional plain arguments.
var mageCommand = regexp.MustCompile(`^go run mage\.go [a-z][a-z0-9]*(:[a-z][a-z0-9]*)?( [A-Za-z0-9_./-]+)*$`)

// TestWorkflowsOnlyCallMage fails on any run step (or Dagger step argument)
// that is not a single `go run mage.go <target> [args]`: the logic lives in
// Go packages with tests, not in YAML.
func TestWorkflowsOnlyCallMage(t *testing.T) {
	for _, f := range workflowFiles(t) {
		w, _ := readWorkflow(t, filepath.Base(f))
		for job, j := range w.Jobs {
			for i, s := range j.Steps {
				cmd := s.Run
				if strings.HasPrefix(s.Uses, "dagger/dagger-for-github@") {
					cmd = s.With["args"]
				}
				if s.Uses != "" && cmd == "" {
					continue // an action: checkout, setup-go, upload-artifact
				}
				assert.Regexp(t, mageCommand, strings.TrimSpace(cmd), "%s: job %s step %d (%s) runs something other than mage",
					filepath.Base(f), job, i, s.Name)
			}
		}
	}
	assert.NotRegexp(t, mageCommand, "go run mage.go test && rm -rf /")
	assert.NotRegexp(t, mageCommand, "sha256sum -c SHA256SUMS")
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
	assert.Contains(t, runs("test"), "go run mage.go ci:test")
	assert.Contains(t, runs("dagger"), "go run mage.go ci:test")
	for job, exe := range map[string]toolchain.Executor{"test": toolchain.Docker, "dagger": toolchain.Dagger} {
		env := map[string]string{}
		for k, v := range w.Jobs[job].Env {
			env[k] = v
		}
		for _, s := range w.Jobs[job].Steps {
			for k, v := range s.Env {
				env[k] = v
			}
		}
		assert.Equal(t, "container", env[toolchain.EnvToolchain], "%s runs in the build image", job)
		assert.Equal(t, string(exe), env[toolchain.EnvExecutor], job)
		assert.Equal(t, "image", w.Jobs[job].Needs, "%s waits for the image job", job)
	}
	assert.Equal(t, "./.github/workflows/build-image.yml", w.Jobs["image"].Uses)
	assert.Contains(t, runs("gpu"), "go run mage.go runner:gpu")
	labels, ok := w.Jobs["gpu"].RunsOn.([]any)
	require.True(t, ok, "gpu runs-on is a label list")
	assert.Contains(t, labels, "self-hosted")
	assert.Contains(t, labels, "gpu")
	assert.Equal(t, "native", w.Jobs["gpu"].Env[toolchain.EnvToolchain])
}

func TestReleaseWorkflow(t *testing.T) {
	w, raw := readWorkflow(t, "release.yml")
	push, ok := w.On["push"].(map[string]any)
	require.True(t, ok, "release runs on push")
	assert.Equal(t, []any{"v*"}, push["tags"])
	j := w.Jobs["release"]
	assert.Equal(t, "${{ github.ref_name }}", j.Env[release.EnvVersion])
	var runs []string
	var found bool
	for _, s := range j.Steps {
		runs = append(runs, s.Run)
		if strings.HasPrefix(s.Uses, "dagger/dagger-for-github@") {
			found = true
			assert.Equal(t, "go run mage.go ci:release", s.With["args"])
			assert.Contains(t, s.Env, EnvImageAddress)
			assert.Contains(t, s.Env, "GITHUB_TOKEN", "ggcr's GitHub keychain pushes with the workflow's token")
		}
	}
	assert.True(t, found, "release runs through Dagger")
	assert.Contains(t, runs, "go run mage.go dist:verify dist")
	assert.Contains(t, runs, "go run mage.go dist:attach dist")
	for _, want := range []string{"dist/*" + release.SBOMSuffix, "dist/*" + release.ProvenanceSuffix, "dist/SHA256SUMS", "dist/image/"} {
		assert.Contains(t, raw, want, "uploaded with the release")
	}
}
