package keyfile

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// testKey is a small key from a development setup.
func testKey(t testing.TB) *groth16.ProvingKey {
	t.Helper()
	sys, err := r1cs.Compile(&r1cstest.MulChain{N: 5})
	require.NoError(t, err)
	pk, _, err := groth16.Setup(sys, zeroReader{})
	require.NoError(t, err)
	return pk
}

// zeroReader is a fixed, non-random stream (0x01 bytes): the setup's
// trapdoor is irrelevant here, only the file's bytes are.
type zeroReader struct{}

func (zeroReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = 1
	}
	return len(b), nil
}

// goodFile returns the bytes of a valid key file.
func goodFile(t testing.TB) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "good.rawpk")
	require.NoError(t, Write(path, testKey(t)))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// resign rewrites b's header after mutate changed it, as a writer with that
// header would have written it.
func resign(t *testing.T, b []byte, mutate func(h *Header)) []byte {
	t.Helper()
	h, err := ParseHeader(b[:Align], int64(len(b)))
	require.NoError(t, err)
	mutate(h)
	return append(encodeHeader(h), b[Align:]...)
}

// resum recomputes section id's checksum after its bytes were changed.
func resum(t *testing.T, b []byte, id SectionID) []byte {
	t.Helper()
	return resign(t, b, func(h *Header) {
		s := h.Sections[id]
		var one [nbSections][]byte
		one[id] = b[s.Offset : s.Offset+s.Length]
		h.Sections[id].Sum = sumAll(one, h.HashChunk)[id]
	})
}

func TestDamagedFilesAreClearErrors(t *testing.T) {
	good := goodFile(t)
	h, err := ParseHeader(good[:Align], int64(len(good)))
	require.NoError(t, err)
	lh, infA := h.Sections[SecLH], h.Sections[SecInfA]
	flip := func(b []byte, at uint64) []byte { b = append([]byte(nil), b...); b[at] ^= 0x10; return b }
	for _, tc := range []struct {
		name, section string
		file          func(t *testing.T) []byte
		want          error
	}{
		{"empty", "header", func(*testing.T) []byte { return nil }, ErrTruncated},
		{"shorter than the header", "header", func(*testing.T) []byte { return good[:100] }, ErrTruncated},
		{"bad magic", "header", func(*testing.T) []byte { return flip(good, 0) }, ErrFormat},
		{"newer version", "header", func(t *testing.T) []byte {
			b := append([]byte(nil), good...)
			binary.LittleEndian.PutUint32(b[8:], Version+1)
			return b
		}, ErrVersion},
		{"another curve", "header", func(*testing.T) []byte { return flip(good, 12) }, ErrCurve},
		{"header bit flipped", "header", func(*testing.T) []byte { return flip(good, 30) }, ErrChecksum},
		{"truncated", "header", func(*testing.T) []byte { return good[:len(good)-Align] }, ErrTruncated},
		{"bytes appended", "header", func(*testing.T) []byte { return append(append([]byte(nil), good...), 0) }, ErrCorrupt},
		{"point bit flipped", "L‖H", func(*testing.T) []byte { return flip(good, lh.Offset+lh.Length/2) }, ErrChecksum},
		{"misaligned section", "A", func(t *testing.T) []byte {
			return resign(t, good, func(h *Header) { h.Sections[SecA].Offset += 8 })
		}, ErrAlignment},
		{"count disagrees with length", "A", func(t *testing.T) []byte {
			return resign(t, good, func(h *Header) { h.Sections[SecA].Count++ })
		}, ErrCorrupt},
		{"L‖H count disagrees with the shape", "L‖H", func(t *testing.T) []byte {
			return resign(t, good, func(h *Header) { h.DomainSize *= 2 })
		}, ErrCorrupt},
		{"domain not a power of two", "header", func(t *testing.T) []byte {
			return resign(t, good, func(h *Header) { h.DomainSize = 3 })
		}, ErrCorrupt},
		{"section past the end", "B2", func(t *testing.T) []byte {
			return resign(t, good, func(h *Header) { h.Sections[SecB2].Offset += 1 << 40 })
		}, ErrTruncated},
		{"sections overlap", "InfinityB", func(t *testing.T) []byte {
			return resign(t, good, func(h *Header) { h.Sections[SecInfB].Offset = h.Sections[SecInfA].Offset })
		}, ErrCorrupt},
		{"hash piece not a power of two", "header", func(t *testing.T) []byte {
			return resign(t, good, func(h *Header) { h.HashChunk = 3 * Align })
		}, ErrCorrupt},
		{"unknown flag", "header", func(t *testing.T) []byte {
			return resign(t, good, func(h *Header) { h.Flags |= 1 << 7 })
		}, ErrCorrupt},
		{"mask byte not a bool", "InfinityA", func(t *testing.T) []byte {
			b := append([]byte(nil), good...)
			b[infA.Offset] = 2
			return resum(t, b, SecInfA)
		}, ErrCorrupt},
		{"mask disagrees with A", "InfinityA", func(t *testing.T) []byte {
			b := append([]byte(nil), good...)
			b[infA.Offset] ^= 1
			return resum(t, b, SecInfA)
		}, ErrCorrupt},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "damaged.rawpk")
			require.NoError(t, os.WriteFile(path, tc.file(t), 0o644))
			k, err := Open(path)
			if k != nil {
				k.Close()
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			fe, ok := errors.AsType[*Error](err)
			require.True(t, ok, "an *Error: %v", err)
			assert.Equal(t, path, fe.Path)
			assert.Equal(t, tc.section, fe.Section)
			assert.Contains(t, err.Error(), path)
			assert.Contains(t, err.Error(), tc.section)
		})
	}
}

func TestSkipVerifyTrustsTheSections(t *testing.T) {
	good := goodFile(t)
	h, err := ParseHeader(good[:Align], int64(len(good)))
	require.NoError(t, err)
	b := append([]byte(nil), good...)
	b[h.Sections[SecLH].Offset+1] ^= 0x10
	path := filepath.Join(t.TempDir(), "k.rawpk")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	_, err = Open(path)
	require.ErrorIs(t, err, ErrChecksum)
	k, err := Open(path, SkipVerify())
	require.NoError(t, err, "without verification a flipped point bit goes unnoticed, as documented")
	err = k.Verify()
	require.ErrorIs(t, err, ErrChecksum, "until Verify")
	assert.ErrorContains(t, err, "section L‖H")
	assert.ErrorContains(t, err, path)
	require.NoError(t, k.Close())
	assert.Error(t, k.Verify(), "a closed key cannot be verified")

	require.NoError(t, os.WriteFile(path, good, 0o644))
	k, err = Open(path, SkipVerify())
	require.NoError(t, err)
	assert.NoError(t, k.Verify())
	require.NoError(t, k.Close())
}

func TestLayoutIsAligned(t *testing.T) {
	good := goodFile(t)
	h, err := ParseHeader(good[:Align], int64(len(good)))
	require.NoError(t, err)
	assert.Zero(t, len(good)%Align)
	for _, s := range h.Sections {
		assert.Zero(t, s.Offset%Align, "section %s", s.ID)
		end := s.Offset + s.Length
		assert.Equal(t, make([]byte, alignUp(end)-end), good[end:alignUp(end)], "section %s is padded with zeros", s.ID)
	}
	assert.Equal(t, uint64(1), h.Sections[SecSmall].Count)
	assert.Equal(t, h.NbPrivate+h.DomainSize-1, h.Sections[SecLH].Count)
}

func TestSumsHashPieces(t *testing.T) {
	b := make([]byte, 2*Align+100)
	for i := range b {
		b[i] = byte(i * 7)
	}
	var data [nbSections][]byte
	data[SecLH] = b
	leaf := func(p []byte) []byte { s := sha256.Sum256(p); return s[:] }
	want := sha256.Sum256(append(append(leaf(b[:Align]), leaf(b[Align:2*Align])...), leaf(b[2*Align:])...))
	sums := sumAll(data, Align)
	assert.Equal(t, Sum(want), sums[SecLH], "three pieces")
	assert.Equal(t, Sum(sha256.Sum256(leaf(nil))), sums[SecA], "an empty section is one empty piece")
	assert.Equal(t, Sum(sha256.Sum256(leaf(b))), sumAll(data, HashChunk)[SecLH], "one piece")
}

// TestReadsTheHeadersPieceSize: Open hashes in the pieces the header
// names, not in this build's HashChunk.
func TestReadsTheHeadersPieceSize(t *testing.T) {
	good := goodFile(t)
	b := resign(t, good, func(h *Header) {
		h.HashChunk = Align
		var secs [nbSections][]byte
		for i, s := range h.Sections {
			secs[i] = good[s.Offset : s.Offset+s.Length]
		}
		sums := sumAll(secs, Align)
		for i := range h.Sections {
			h.Sections[i].Sum = sums[i]
		}
	})
	path := filepath.Join(t.TempDir(), "k.rawpk")
	require.NoError(t, os.WriteFile(path, b, 0o644))
	k, err := Open(path)
	require.NoError(t, err)
	assert.Equal(t, uint64(Align), k.Header.HashChunk)
	require.NoError(t, k.Close())
}
