package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cubic is a small circuit in the exchange format: y = x³ + x + 5, a boolean
// b and a row with non-unit coefficients. Variables: w = (1, y | x, x2, x3, b).
type cubic struct {
	x, b, y uint64
}

func (c cubic) encode(t *testing.T) []byte {
	t.Helper()
	const one, y, x, x2, x3, b = 0, 1, 2, 3, 4, 5
	type lc [][2]uint32 // (column, coefficient id)
	// coefficients: 1, 5, 7, 3, 21
	rows := [][3]lc{
		{{{x, 0}}, {{x, 0}}, {{x2, 0}}},                     // x·x = x2
		{{{x2, 0}}, {{x, 0}}, {{x3, 0}}},                    // x2·x = x3
		{{{b, 0}}, {{b, 0}}, {{b, 0}}},                      // b·b = b
		{{{x3, 0}, {x, 0}, {one, 1}}, {{one, 0}}, {{y, 0}}}, // (x3 + x + 5)·1 = y
		{{{x, 0}, {b, 2}}, {{one, 3}}, {{x, 3}, {b, 4}}},    // (x + 7b)·3 = 3x + 21b
	}
	var buf bytes.Buffer
	u32 := func(v ...uint32) { require.NoError(t, binary.Write(&buf, binary.LittleEndian, v)) }
	elem := func(v uint64) {
		var e fr.Element
		e.SetUint64(v)
		b := e.Bytes()
		buf.Write(b[:])
	}
	buf.Write(magic[:])
	u32(2, 4, uint32(len(rows)), 5)
	for _, v := range []uint64{1, 5, 7, 3, 21} {
		elem(v)
	}
	for m := range 3 {
		var ptr, cols, ids []uint32
		ptr = append(ptr, 0)
		for _, r := range rows {
			for _, term := range r[m] {
				cols, ids = append(cols, term[0]), append(ids, term[1])
			}
			ptr = append(ptr, uint32(len(cols)))
		}
		u32(uint32(len(cols)))
		u32(ptr...)
		u32(cols...)
		u32(ids...)
	}
	for _, v := range []uint64{1, c.y, c.x, c.x * c.x, c.x * c.x * c.x, c.b} {
		elem(v)
	}
	return buf.Bytes()
}

func writeTemp(t *testing.T, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "circuit.czr1")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	return path
}

func TestProveAndCache(t *testing.T) {
	in := writeTemp(t, cubic{x: 3, b: 1, y: 35}.encode(t))
	keys := t.TempDir()
	rep, err := run(in, keys, 2)
	require.NoError(t, err)
	assert.Equal(t, 5, rep.Constraints)
	assert.Equal(t, 2, rep.Public)
	assert.Equal(t, 2, rep.Secret, "x and b are given")
	assert.Equal(t, 2, rep.Internal, "x2 and x3 are solved")
	assert.Equal(t, 3, rep.Proofs)
	assert.Equal(t, 3, rep.Verified)
	assert.Len(t, rep.Solve, 2)
	assert.Len(t, rep.Prove, 2)
	assert.False(t, rep.SetupCached)
	assert.Positive(t, rep.Setup)
	assert.Empty(t, rep.KeyCacheError)

	again, err := run(in, keys, 1)
	require.NoError(t, err)
	assert.True(t, again.SetupCached, "second run loads the keys")
	assert.Equal(t, 2, again.Verified)

	// Another witness of the same shape reuses the keys and still verifies.
	other := writeTemp(t, cubic{x: 2, b: 0, y: 15}.encode(t))
	rep, err = run(other, keys, 1)
	require.NoError(t, err)
	assert.True(t, rep.SetupCached)
	assert.Equal(t, 2, rep.Verified)
}

func TestWrongWitnessFails(t *testing.T) {
	in := writeTemp(t, cubic{x: 3, b: 1, y: 36}.encode(t))
	_, err := run(in, "", 1)
	require.Error(t, err)
}

func TestReadRejectsDamage(t *testing.T) {
	good := cubic{x: 3, b: 1, y: 35}.encode(t)
	badColumn := bytes.Clone(good)
	// the first column of A sits after magic, 4 counts, 5 coefficients,
	// A's term count and its 6 row pointers
	binary.LittleEndian.PutUint32(badColumn[4+16+5*32+4+6*4:], 99)
	for name, data := range map[string][]byte{
		"magic":     append([]byte("XXXX"), good[4:]...),
		"truncated": good[:len(good)-7],
		"column":    badColumn,
		"empty":     nil,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readExported(bytes.NewReader(data))
			require.Error(t, err)
		})
	}
	e, err := readExported(bytes.NewReader(good))
	require.NoError(t, err)
	assert.Equal(t, 5, e.nbConstraints)
}

func TestSplitLog(t *testing.T) {
	log := `{"level":"debug","took":1500,"message":"constraint system solver done"}
{"level":"debug","took":4200,"message":"prover done"}
`
	solve, prove, err := splitLog(bytes.NewBufferString(log))
	require.NoError(t, err)
	assert.EqualValues(t, 1500, solve)
	assert.EqualValues(t, 4200, prove)
	_, _, err = splitLog(bytes.NewBufferString(`{"message":"prover done","took":1}`))
	require.Error(t, err, "no solver line")
}
