package release

import (
	"maps"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/ci/debian"
	"github.com/cuzk-dev/cuzk/ci/oci"
	"github.com/cuzk-dev/cuzk/daemon/assembly"
)

func serveBundle() Bundle {
	return Bundle{Options: Options{Version: "v1.2.3", Epoch: epoch, GOOS: "linux", GOARCH: "amd64"},
		Commit: strings.Repeat("c", 40), Repository: "https://example.com/cuzk",
		Files: []oci.File{
			{Path: "bin/cuzk-bench", Mode: 0o755, Data: []byte("bench")},
			{Path: "bin/cuzk-daemon", Mode: 0o755, Data: []byte("daemon")},
			{Path: "share/cuzk/manifest.json", Mode: 0o644, Data: []byte("{}")},
		}}
}

// TestImageServesAsItIs: the daemon image's config runs `cuzk-daemon
// serve` on all interfaces with the key volume, exposes both ports, and
// carries the OCI labels (also as manifest annotations), the same bytes
// every time.
func TestImageServesAsItIs(t *testing.T) {
	b := serveBundle()
	dir := t.TempDir()
	d, err := b.WriteImage(dir, testBase())
	require.NoError(t, err)
	c, err := oci.Verify(dir)
	require.NoError(t, err)
	cfg := c.Config.Config
	assert.Equal(t, []string{"/usr/local/bin/cuzk-daemon"}, cfg.Entrypoint)
	assert.Equal(t, []string{"serve"}, cfg.Cmd)
	assert.Equal(t, "65532:65532", cfg.User)
	assert.Equal(t, map[string]struct{}{"9820/tcp": {}, "9821/tcp": {}}, cfg.ExposedPorts)
	assert.Equal(t, map[string]struct{}{"/var/lib/cuzk/keys": {}}, cfg.Volumes)
	for _, e := range []string{"CUZK_DAEMON_LISTEN=:9820", "CUZK_DAEMON_HTTP_LISTEN=:9821", "CUZK_DAEMON_KEY_DIR=/var/lib/cuzk/keys"} {
		assert.Contains(t, cfg.Env, e)
	}
	want := map[string]string{
		"org.opencontainers.image.title":       "cuzk",
		"org.opencontainers.image.description": "cuzk: a GPU Groth16 proving daemon",
		"org.opencontainers.image.version":     "v1.2.3",
		"org.opencontainers.image.revision":    strings.Repeat("c", 40),
		"org.opencontainers.image.source":      "https://example.com/cuzk",
		"org.opencontainers.image.licenses":    "Apache-2.0 OR MIT",
		"org.opencontainers.image.created":     "2025-06-15T15:06:40Z",
	}
	assert.Equal(t, want, cfg.Labels)
	assert.Equal(t, want, c.Manifest.Annotations, "the manifest says the same as the config")
	assert.Equal(t, epoch, c.Config.Created.Time.UTC(), "created is SOURCE_DATE_EPOCH")

	again, err := b.WriteImage(t.TempDir(), testBase())
	require.NoError(t, err)
	assert.Equal(t, d.Digest, again.Digest, "same bundle, same image")

	b.Commit, b.Repository = "", ""
	img, err := b.Image(testBase())
	require.NoError(t, err)
	assert.NotContains(t, img.Labels, "org.opencontainers.image.revision", "an unknown commit is left out, not empty")
	assert.Equal(t, DefaultRepository, img.Labels["org.opencontainers.image.source"])
}

// TestImageWithoutDaemonHasNoServeConfig: a bundle whose only binary is not
// the daemon gets neither the serve command nor its ports and volume.
func TestImageWithoutDaemonHasNoServeConfig(t *testing.T) {
	b := serveBundle()
	b.Files = b.Files[:1]
	dir := t.TempDir()
	_, err := b.WriteImage(dir, testBase())
	require.NoError(t, err)
	c, err := oci.Verify(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"/usr/local/bin/cuzk-bench"}, c.Config.Config.Entrypoint)
	assert.Empty(t, c.Config.Config.Cmd)
	assert.Empty(t, c.Config.Config.ExposedPorts)
	assert.Empty(t, c.Config.Config.Volumes)
}

// TestImageDefaultsAreTheDaemons: the image's ports are the daemon's own
// default ports, and its key directory is the one the base layer creates
// for the image's user.
func TestImageDefaultsAreTheDaemons(t *testing.T) {
	o := assembly.DefaultConfig()
	for addr, port := range map[string]int{o.Listen: ImageGRPCPort, o.HTTPListen: ImageHTTPPort} {
		_, p, err := net.SplitHostPort(addr)
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(port), p, addr)
	}
	assert.Equal(t, debian.KeyDir, ImageKeyDir)
	assert.Equal(t, strconv.Itoa(debian.NonrootUID)+":"+strconv.Itoa(debian.NonrootUID), ImageUser)
}

// TestImageLabelsAgreeWithProvenance: a release's image labels name the
// provenance's version, commit and repository; an edited label is named.
func TestImageLabelsAgreeWithProvenance(t *testing.T) {
	dir := stampedRelease(t)
	v, err := Verify(dir)
	require.NoError(t, err)
	c, err := oci.Verify(filepath.Join(dir, ImageDir))
	require.NoError(t, err)
	labels := c.Config.Config.Labels
	require.NoError(t, checkImageLabels(labels, v))
	assert.Equal(t, testSource.Commit, labels[oci.AnnotationRevision])
	assert.Equal(t, testSource.Repository, labels["org.opencontainers.image.source"])

	for label, value := range map[string]string{
		oci.AnnotationVersion:             "v9.9.9",
		oci.AnnotationRevision:            strings.Repeat("d", 40),
		"org.opencontainers.image.source": "https://example.com/fork",
	} {
		forged := maps.Clone(labels)
		forged[label] = value
		assert.ErrorContains(t, checkImageLabels(forged, v), "image label "+label+" \""+value+"\"")
	}
	unknown := v
	unknown.Commit, unknown.Source = "", noAssertion
	assert.ErrorContains(t, checkImageLabels(labels, unknown), "externalParameters.commit \"\"", "a revision the provenance does not know")
}
