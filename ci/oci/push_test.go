package oci

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPushLayoutByDigest pushes a layout to ggcr's registry implementation
// and reads the image back by the digest Push returns.
func TestPushLayoutByDigest(t *testing.T) {
	srv := httptest.NewServer(registry.New())
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := filepath.Join(t.TempDir(), "layout")
	d := writeTestLayout(t, dir)

	ref, err := PushLayout(context.Background(), dir, host+"/cuzk:v0.1.0")
	require.NoError(t, err)
	assert.Equal(t, host+"/cuzk@"+d.Digest.String(), ref.String())

	got, err := remote.Image(ref)
	require.NoError(t, err)
	gd, err := got.Digest()
	require.NoError(t, err)
	assert.Equal(t, d.Digest, gd, "the registry serves the same manifest bytes")
	tag, err := name.ParseReference(host + "/cuzk:v0.1.0")
	require.NoError(t, err)
	tagged, err := remote.Head(tag)
	require.NoError(t, err)
	assert.Equal(t, d.Digest, tagged.Digest)

	_, err = PushLayout(context.Background(), t.TempDir(), host+"/cuzk:v0.1.0")
	assert.Error(t, err, "an empty directory is no layout")
	_, err = PushLayout(context.Background(), dir, "Bad Ref")
	assert.Error(t, err)
}
