package ci

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDependencies enforces the package map: images, base packages and
// releases are built without a container engine (no dagger, no docker or
// moby engine client, no grpc in ci/oci, ci/debian or ci/release; ggcr's
// keychain reads docker's credential files, which is no engine), each uses
// the library named for its job, and dagger stays in ci.
func TestDependencies(t *testing.T) {
	const mod = "github.com/cuzk-dev/cuzk/"
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Fields(string(out))
	}
	uses := map[string][]string{
		mod + "ci/oci":     {"github.com/google/go-containerregistry/pkg/v1/mutate", "github.com/google/go-containerregistry/pkg/v1/layout"},
		mod + "ci/debian":  {mod + "ci/oci", mod + "internal/renameio", "github.com/ulikunitz/xz"},
		mod + "ci/release": {mod + "ci/oci", mod + "ci/debian", "github.com/spdx/tools-golang/spdx/v2/v2_3", "github.com/in-toto/attestation/go/v1"},
	}
	for pkg, want := range uses {
		t.Run(pkg, func(t *testing.T) {
			got := deps(pkg)
			for _, w := range want {
				assert.Contains(t, got, w)
			}
			banned := []string{"dagger.io/", "github.com/moby/moby/client", "github.com/docker/docker/client", "google.golang.org/grpc"}
			if pkg == mod+"ci/release" {
				// Signing (ci/sign, sigstore-go) brings grpc's packages through
				// Sigstore's protobuf specs; no client of an engine comes with it.
				banned = banned[:3]
			}
			for _, d := range got {
				for _, banned := range banned {
					assert.False(t, strings.HasPrefix(d, banned), "%s must not depend on %s", pkg, d)
				}
			}
		})
	}
	assert.Contains(t, deps("."), "dagger.io/dagger", "ci is where the pipelines use dagger")
}
