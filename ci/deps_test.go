package ci

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDependencies enforces the package map: ci/oci uses the standard
// library only, ci/release adds only ci/oci, and dagger stays in ci.
func TestDependencies(t *testing.T) {
	allowed := map[string][]string{
		"github.com/cuzk-dev/cuzk/ci/oci":     {"github.com/cuzk-dev/cuzk/ci/oci"},
		"github.com/cuzk-dev/cuzk/ci/release": {"github.com/cuzk-dev/cuzk/ci/release", "github.com/cuzk-dev/cuzk/ci/oci"},
	}
	for pkg, ok := range allowed {
		t.Run(pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
			require.NoError(t, err, "%s", out)
			for _, dep := range strings.Fields(string(out)) {
				assert.Contains(t, ok, dep, "%s must not depend on %s", pkg, dep)
			}
		})
	}
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "dagger.io/dagger\n", "ci is where the pipelines use dagger")
}
