package groth16

import (
	"encoding/json"
	"math/big"
	"math/rand"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The moduli, written out so that the expected strings do not come from
// the code under test.
const (
	rDecimal = "52435875175126190479447740508185965837690552500527637822603658699938581184513"
	pDecimal = "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129015664037894272559787"
)

// below returns the decimal of m − k for a decimal m.
func below(t *testing.T, m string, k int64) string {
	t.Helper()
	v, ok := new(big.Int).SetString(m, 10)
	require.True(t, ok)
	return v.Sub(v, big.NewInt(k)).String()
}

// Field elements are written as the canonical decimal of their value, the
// top of the field included, where gnark-crypto's String writes "-k".
func TestCanonicalDecimals(t *testing.T) {
	require.Equal(t, rDecimal, fr.Modulus().String())
	require.Equal(t, pDecimal, fp.Modulus().String())
	rng := rand.New(rand.NewSource(4))
	for _, k := range []int64{1, 2, 65535, 65536} {
		var e fr.Element
		e.SetInt64(-k)
		assert.Equal(t, below(t, rDecimal, k), frDecimal(&e), "fr: r − %d", k)
		var f fp.Element
		f.SetInt64(-k)
		assert.Equal(t, below(t, pDecimal, k), fpDecimal(&f), "fp: p − %d", k)
	}
	var zero, one fr.Element
	one.SetOne()
	assert.Equal(t, "0", frDecimal(&zero))
	assert.Equal(t, "1", frDecimal(&one))
	var fzero, fone fp.Element
	fone.SetOne()
	assert.Equal(t, "0", fpDecimal(&fzero))
	assert.Equal(t, "1", fpDecimal(&fone))
	for range 100 {
		v := new(big.Int).Rand(rng, fr.Modulus())
		var e fr.Element
		e.SetBigInt(v)
		assert.Equal(t, v.String(), frDecimal(&e))
		w := new(big.Int).Rand(rng, fp.Modulus())
		var f fp.Element
		f.SetBigInt(w)
		assert.Equal(t, w.String(), fpDecimal(&f))
	}
}

// public.json holds canonical decimals: the top of the field is not negative.
func TestPublicSnarkJSDecimals(t *testing.T) {
	var top, one, mid fr.Element
	top.SetInt64(-1)
	one.SetOne()
	mid.SetUint64(123456789)
	raw, err := MarshalPublicSnarkJS([]fr.Element{top, one, {}, mid})
	require.NoError(t, err)
	var got []string
	require.NoError(t, json.Unmarshal(raw, &got))
	assert.Equal(t, []string{below(t, rDecimal, 1), "1", "0", "123456789"}, got)
	assert.NotContains(t, string(raw), "-")
	var g fp.Element
	g.SetInt64(-7)
	var h fp.Element
	h.SetUint64(9)
	assert.Equal(t, []string{below(t, pDecimal, 7), "9"}, e2JSON(&bls12381.E2{A0: g, A1: h}), "Fp2 coordinates")
}
