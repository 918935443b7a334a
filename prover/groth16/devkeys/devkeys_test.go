package devkeys

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func compile(t *testing.T, target int, seed int64) *r1cs.System {
	t.Helper()
	c, err := porep.New(target, seed)
	require.NoError(t, err)
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	return sys
}

func encode(t *testing.T, src io.WriterTo) []byte {
	t.Helper()
	var buf bytes.Buffer
	_, err := src.WriteTo(&buf)
	require.NoError(t, err)
	return buf.Bytes()
}

func TestGetCachesKeys(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "made", "by", "get")
	sys := compile(t, porep.MinTarget, 1)
	pk, vk, info, err := Get(dir, "porep-synth-1024", sys, 5)
	require.NoError(t, err)
	assert.False(t, info.Cached)
	assert.Empty(t, info.Replaced, "nothing was there")
	assert.Positive(t, info.Setup)
	assert.Equal(t, filepath.Join(dir, "porep-synth-1024-setup5-"+ShapeID(sys)+".pk"), info.PKPath,
		"the file name scheme existing caches use")
	assert.Equal(t, info.PKPath[:len(info.PKPath)-3]+".vk", info.VKPath)
	assert.Positive(t, info.PKSize)
	assert.Positive(t, info.VKSize)

	pk2, vk2, info2, err := Get(dir, "porep-synth-1024", compile(t, porep.MinTarget, 2), 5)
	require.NoError(t, err)
	assert.True(t, info2.Cached, "another witness seed has the same shape")
	assert.Zero(t, info2.Setup)
	assert.Equal(t, info.PKSize, info2.PKSize)
	assert.Equal(t, encode(t, pk), encode(t, pk2))
	assert.Equal(t, encode(t, vk), encode(t, vk2))

	// With no cache the setup is the same deterministic one.
	pk3, _, info3, err := Get("", "porep-synth-1024", sys, 5)
	require.NoError(t, err)
	assert.False(t, info3.Cached)
	assert.Empty(t, info3.PKPath)
	assert.Equal(t, encode(t, pk), encode(t, pk3))
}

func TestGetKeysAreSeparate(t *testing.T) {
	dir := t.TempDir()
	sys := compile(t, porep.MinTarget, 1)
	_, _, a, err := Get(dir, "c", sys, 1)
	require.NoError(t, err)
	for _, tc := range []struct {
		name, circuit string
		sys           *r1cs.System
		seed          uint64
	}{
		{"another seed", "c", sys, 2},
		{"another name", "d", sys, 1},
		{"another shape", "c", compile(t, 2*porep.MinTarget, 1), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, b, err := Get(dir, tc.circuit, tc.sys, tc.seed)
			require.NoError(t, err)
			assert.False(t, b.Cached)
			assert.NotEqual(t, a.PKPath, b.PKPath)
		})
	}
}

// TestBadFileIsReplaced plants a damaged or mismatched file where Get looks:
// each is a miss that says why, and the rewritten file loads next time.
func TestBadFileIsReplaced(t *testing.T) {
	sys := compile(t, porep.MinTarget, 1)
	otherPK, otherVK, _, err := Get("", "x", compile(t, 2*porep.MinTarget, 1), 5)
	require.NoError(t, err)
	goodPK, _, _, err := Get("", "x", sys, 5)
	require.NoError(t, err)
	good := encode(t, goodPK)
	for _, tc := range []struct {
		name   string
		pk, vk []byte // nil: leave absent
	}{
		{"garbage proving key", []byte("not a key"), nil},
		{"truncated proving key", good[:len(good)/2], nil},
		{"garbage verifying key", good, []byte("not a key")},
		{"keys of another shape", encode(t, otherPK), encode(t, otherVK)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			pkPath, vkPath, _ := paths(dir, "x", 5, ShapeID(sys))
			for path, b := range map[string][]byte{pkPath: tc.pk, vkPath: tc.vk} {
				if b != nil {
					require.NoError(t, os.WriteFile(path, b, 0o644))
				}
			}
			_, _, info, err := Get(dir, "x", sys, 5)
			require.NoError(t, err)
			assert.False(t, info.Cached, "a bad file is a miss")
			assert.NotEmpty(t, info.Replaced, "and says why")
			_, _, info, err = Get(dir, "x", sys, 5)
			require.NoError(t, err)
			assert.True(t, info.Cached, "the rewritten file loads")
			left, err := filepath.Glob(filepath.Join(dir, "*.tmp*"))
			require.NoError(t, err)
			assert.Empty(t, left, "no temporary files left behind")
		})
	}
}

func TestGetConcurrent(t *testing.T) {
	dir := t.TempDir()
	sys := compile(t, porep.MinTarget, 1)
	const n = 4
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var pk *groth16.ProvingKey
			pk, _, _, errs[i] = Get(dir, "c", sys, 9)
			if errs[i] == nil {
				keys[i] = encode(t, pk)
			}
		})
	}
	wg.Wait()
	for i := range n {
		require.NoError(t, errs[i])
		assert.Equal(t, keys[0], keys[i], "every caller sees the same key")
	}
	_, _, info, err := Get(dir, "c", sys, 9)
	require.NoError(t, err)
	assert.True(t, info.Cached)
}

func TestGetRejectsBadName(t *testing.T) {
	sys := compile(t, porep.MinTarget, 1)
	for _, name := range []string{"", "a/b", `a\b`} {
		_, _, _, err := Get(t.TempDir(), name, sys, 1)
		assert.Error(t, err, "name %q", name)
	}
}

type failingWriter struct{}

func (failingWriter) WriteTo(w io.Writer) (int64, error) {
	n, _ := w.Write([]byte("half a ke")) // the failure below is the one under test
	return int64(n), errors.New("disk full")
}

func TestWriteFileAtomicKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.pk")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	err := writeFileAtomic(path, failingWriter{})
	require.ErrorContains(t, err, "disk full")
	assert.ErrorContains(t, err, path, "the error names the file")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "old", string(b), "a failed write leaves the old file whole")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")
}

func TestShapeID(t *testing.T) {
	a := compile(t, porep.MinTarget, 1)
	assert.Equal(t, ShapeID(a), ShapeID(compile(t, porep.MinTarget, 2)), "the witness seed does not change the shape")
	assert.NotEqual(t, ShapeID(a), ShapeID(compile(t, 2*porep.MinTarget, 1)))
	b := *a
	b.C.CoeffID = append([]uint32(nil), a.C.CoeffID...)
	b.C.CoeffID[0]++
	assert.NotEqual(t, ShapeID(a), ShapeID(&b), "one coefficient changed")
}

func TestRand(t *testing.T) {
	read := func(seed, stream uint64) []byte {
		b := make([]byte, 32)
		_, err := io.ReadFull(Rand(seed, stream), b)
		require.NoError(t, err)
		return b
	}
	assert.Equal(t, read(1, 2), read(1, 2))
	assert.NotEqual(t, read(1, 2), read(1, 3))
	assert.NotEqual(t, read(1, 2), read(2, 2))
}

func TestRawFileWrittenAndMapped(t *testing.T) {
	dir := t.TempDir()
	sys := compile(t, porep.MinTarget, 1)
	_, _, _, err := Mapped(dir, "c", sys, 3)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing there yet")

	pk, vk, info, err := Get(dir, "c", sys, 3)
	require.NoError(t, err)
	assert.NoFileExists(t, info.RawPath, "no raw file without WithRawFile")
	_, _, info, err = Get(dir, "c", sys, 3, WithRawFile())
	require.NoError(t, err)
	assert.True(t, info.Cached)
	assert.Equal(t, info.PKPath[:len(info.PKPath)-3]+RawExt, info.RawPath)
	assert.Positive(t, info.RawSize, "a cached pair gets its raw file")

	k, vk2, minfo, err := Mapped(dir, "c", sys, 3)
	require.NoError(t, err)
	defer func() { assert.NoError(t, k.Close()) }()
	assert.True(t, minfo.Cached)
	assert.False(t, k.Header.Checked(), "development keys are written without point checks")
	assert.Equal(t, encode(t, pk), encode(t, k.PK))
	assert.Equal(t, encode(t, vk), encode(t, vk2))

	fresh := t.TempDir()
	_, _, info, err = Get(fresh, "c", sys, 3, WithRawFile())
	require.NoError(t, err)
	assert.False(t, info.Cached)
	assert.FileExists(t, info.RawPath, "a setup writes the raw file too")

	_, _, _, err = Mapped(dir, "c", compile(t, 2*porep.MinTarget, 1), 3)
	require.ErrorIs(t, err, os.ErrNotExist, "another shape has its own files")
	b, err := os.ReadFile(info.RawPath)
	require.NoError(t, err)
	h, err := keyfile.ParseHeader(b[:keyfile.Align], int64(len(b)))
	require.NoError(t, err)
	b[h.Sections[keyfile.SecLH].Offset] ^= 1 // a point, not the padding after it
	require.NoError(t, os.WriteFile(info.RawPath, b, 0o644))
	_, _, _, err = Mapped(fresh, "c", sys, 3)
	require.Error(t, err)
	assert.NotErrorIs(t, err, os.ErrNotExist)
	assert.ErrorContains(t, err, info.RawPath)
}

// TestRawFileOnlyLeavesNoPK checks that WithRawFileOnly leaves the raw key
// file and the .vk, with the key a Get without a cache makes, and no .pk;
// that a damaged .pk it finds is replaced by the raw file, not kept; and
// that a sound .pk (written without the option) is still loaded.
func TestRawFileOnlyLeavesNoPK(t *testing.T) {
	sys := compile(t, porep.MinTarget, 1)
	want, wantVK, _, err := Get("", "c", sys, 3)
	require.NoError(t, err)

	dir := t.TempDir()
	pk, _, info, err := Get(dir, "c", sys, 3, WithRawFileOnly())
	require.NoError(t, err)
	assert.False(t, info.Cached)
	assert.Empty(t, info.PKPath)
	assert.Zero(t, info.PKSize)
	assert.Equal(t, encode(t, want), encode(t, pk))
	assert.Positive(t, info.RawSize)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, filepath.Ext(e.Name()))
	}
	assert.ElementsMatch(t, []string{RawExt, ".vk"}, names, "the raw file and the .vk, nothing else")
	k, vk, _, err := Mapped(dir, "c", sys, 3)
	require.NoError(t, err)
	assert.Equal(t, encode(t, want), encode(t, k.PK))
	assert.Equal(t, encode(t, wantVK), encode(t, vk))
	require.NoError(t, k.Close())

	withPK := t.TempDir()
	_, _, info, err = Get(withPK, "c", sys, 3)
	require.NoError(t, err)
	pkPath := info.PKPath
	_, _, info, err = Get(withPK, "c", sys, 3, WithRawFileOnly())
	require.NoError(t, err)
	assert.True(t, info.Cached, "a sound .pk is loaded")
	assert.FileExists(t, info.RawPath)
	assert.FileExists(t, pkPath, "a sound .pk is left as it is")

	require.NoError(t, os.WriteFile(pkPath, []byte("damaged"), 0o644))
	pk, _, info, err = Get(withPK, "c", sys, 3, WithRawFileOnly())
	require.NoError(t, err)
	assert.False(t, info.Cached)
	assert.NotEmpty(t, info.Replaced, "the damaged .pk is named")
	assert.NoFileExists(t, pkPath, "a damaged .pk is removed, the raw file stands for it")
	assert.Equal(t, encode(t, want), encode(t, pk))
}

// countingFixedBase is the CPU FixedBaser counting its calls.
type countingFixedBase struct {
	groth16.CPUFixedBase
	g1 *int
}

func (c countingFixedBase) FixedBaseG1(ctx context.Context, base *bls12381.G1Affine, s []fr.Element) ([]bls12381.G1Affine, error) {
	*c.g1++
	return c.CPUFixedBase.FixedBaseG1(ctx, base, s)
}

// TestGetWithUsesFixedBaser checks that a miss runs the setup on the given
// FixedBaser, with Get's keys, and that a hit does not call it.
func TestGetWithUsesFixedBaser(t *testing.T) {
	dir := t.TempDir()
	sys := compile(t, porep.MinTarget, 1)
	want, _, _, err := Get("", "c", sys, 4)
	require.NoError(t, err)
	calls := 0
	fb := countingFixedBase{g1: &calls}
	got, _, info, err := GetWith(context.Background(), dir, "c", sys, 4, fb)
	require.NoError(t, err)
	assert.False(t, info.Cached)
	assert.Equal(t, 1, calls)
	assert.Equal(t, encode(t, want), encode(t, got))
	_, _, info, err = GetWith(context.Background(), dir, "c", sys, 4, fb)
	require.NoError(t, err)
	assert.True(t, info.Cached)
	assert.Equal(t, 1, calls, "a hit runs no setup")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, _, err = GetWith(ctx, "", "c", sys, 4, fb)
	require.ErrorIs(t, err, context.Canceled)
}
