package groth16_test

import (
	"encoding/json"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// The test reads the exported JSON back with its own minimal parser and
// verifies the proof from the parsed values only.

func parseFp(t *testing.T, s string) fp.Element {
	var e fp.Element
	_, err := e.SetString(s)
	require.NoError(t, err, s)
	return e
}

func parseG1(t *testing.T, v []string) bls12381.G1Affine {
	require.Len(t, v, 3)
	require.Equal(t, "1", v[2], "affine points carry Z = 1")
	p := bls12381.G1Affine{X: parseFp(t, v[0]), Y: parseFp(t, v[1])}
	require.True(t, p.IsOnCurve())
	return p
}

func parseE2(t *testing.T, v []string) bls12381.E2 {
	require.Len(t, v, 2)
	return bls12381.E2{A0: parseFp(t, v[0]), A1: parseFp(t, v[1])}
}

func parseG2(t *testing.T, v [][]string) bls12381.G2Affine {
	require.Len(t, v, 3)
	require.Equal(t, []string{"1", "0"}, v[2])
	p := bls12381.G2Affine{X: parseE2(t, v[0]), Y: parseE2(t, v[1])}
	require.True(t, p.IsOnCurve())
	return p
}

func TestSnarkJSExport(t *testing.T) {
	c := r1cstest.NewCubic(3)
	f := setup(t, c)
	proof, pub := prove(t, f, c, seeded(3))

	pj, err := proof.MarshalSnarkJS()
	require.NoError(t, err)
	var jp struct {
		PiA      []string   `json:"pi_a"`
		PiB      [][]string `json:"pi_b"`
		PiC      []string   `json:"pi_c"`
		Protocol string     `json:"protocol"`
		Curve    string     `json:"curve"`
	}
	require.NoError(t, json.Unmarshal(pj, &jp))
	assert.Equal(t, "groth16", jp.Protocol)
	assert.Equal(t, "bls12381", jp.Curve)

	vj, err := f.vk.MarshalSnarkJS()
	require.NoError(t, err)
	var jv struct {
		Protocol, Curve string
		NPublic         int          `json:"nPublic"`
		Alpha           []string     `json:"vk_alpha_1"`
		Beta            [][]string   `json:"vk_beta_2"`
		Gamma           [][]string   `json:"vk_gamma_2"`
		Delta           [][]string   `json:"vk_delta_2"`
		AlphaBeta       [][][]string `json:"vk_alphabeta_12"`
		IC              [][]string   `json:"IC"`
	}
	require.NoError(t, json.Unmarshal(vj, &jv))
	assert.Equal(t, 1, jv.NPublic)
	assert.Equal(t, "bls12381", jv.Curve)

	var vk groth16.VerifyingKey
	vk.G1.Alpha = parseG1(t, jv.Alpha)
	vk.G2.Beta, vk.G2.Gamma, vk.G2.Delta = parseG2(t, jv.Beta), parseG2(t, jv.Gamma), parseG2(t, jv.Delta)
	for _, p := range jv.IC {
		vk.G1.IC = append(vk.G1.IC, parseG1(t, p))
	}
	p := groth16.Proof{A: parseG1(t, jp.PiA), B: parseG2(t, jp.PiB), C: parseG1(t, jp.PiC)}

	pubJSON, err := groth16.MarshalPublicSnarkJS(pub)
	require.NoError(t, err)
	assert.JSONEq(t, `["35"]`, string(pubJSON))
	var pubStr []string
	require.NoError(t, json.Unmarshal(pubJSON, &pubStr))
	parsedPub := make([]fr.Element, len(pubStr))
	for i, s := range pubStr {
		_, err := parsedPub[i].SetString(s)
		require.NoError(t, err)
	}
	require.NoError(t, groth16.Verify(&vk, &p, parsedPub))

	want, err := bls12381.Pair([]bls12381.G1Affine{vk.G1.Alpha}, []bls12381.G2Affine{vk.G2.Beta})
	require.NoError(t, err)
	require.Len(t, jv.AlphaBeta, 2)
	var got bls12381.GT
	for i, c6 := range []*bls12381.E6{&got.C0, &got.C1} {
		require.Len(t, jv.AlphaBeta[i], 3)
		c6.B0, c6.B1, c6.B2 = parseE2(t, jv.AlphaBeta[i][0]), parseE2(t, jv.AlphaBeta[i][1]), parseE2(t, jv.AlphaBeta[i][2])
	}
	assert.True(t, got.Equal(&want), "vk_alphabeta_12 = e(α, β)")
}

func TestSnarkJSInfinity(t *testing.T) {
	var vk groth16.VerifyingKey
	vk.G1.IC = make([]bls12381.G1Affine, 1) // the zero value is the point at infinity
	_, _, g1, g2 := bls12381.Generators()
	vk.G1.Alpha, vk.G2.Beta, vk.G2.Gamma, vk.G2.Delta = g1, g2, g2, g2
	out, err := vk.MarshalSnarkJS()
	require.NoError(t, err)
	assert.Contains(t, string(out), `"IC": [
  [
   "0",
   "1",
   "0"
  ]`)
}
