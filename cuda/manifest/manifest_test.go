package manifest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEncodeSortsAndDecodeRoundTrips(t *testing.T) {
	m := Manifest{Version: Version, Toolchain: "ab", NvccBuild: "cuda_x", Archs: []string{"sm_90"},
		Kernels: []Kernel{{Name: "ntt", Size: 2}, {Name: "fr_add", Size: 1}}}
	b, err := m.Encode()
	require.NoError(t, err)
	assert.Equal(t, "ntt", m.Kernels[0].Name, "Encode leaves the caller's slice alone")
	got, err := Decode(b)
	require.NoError(t, err)
	assert.Equal(t, []string{"fr_add", "ntt"}, []string{got.Kernels[0].Name, got.Kernels[1].Name})
	k, ok := got.Lookup("ntt")
	assert.True(t, ok)
	assert.Equal(t, int64(2), k.Size)
	_, ok = got.Lookup("msm")
	assert.False(t, ok)
}

func TestDecodeRejectsOtherVersionsAndBadJSON(t *testing.T) {
	_, err := Decode([]byte(`{"version": 99, "kernels": []}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "version 99, want 1")
	_, err = Decode([]byte(`{"version":`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "decode manifest")
}
