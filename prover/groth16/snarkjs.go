package groth16

import (
	"encoding/json"
	"fmt"
	"math/big"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// JSON export in the layout snarkjs writes for Groth16 (proof.json,
// verification_key.json, public.json): field elements as canonical decimal
// strings (the integer in [0, modulus): gnark-crypto's String writes the
// top 65535 values as negative numbers, which snarkjs rejects),
// points in projective form with Z = "1" (G2: ["1","0"]), and the point at
// infinity as snarkjs writes it (G1 ["0","1","0"]). Fp2 elements are
// [c0, c1] with c0 the real part; Fp12 follows the tower Fp2 → Fp6 → Fp12
// that snarkjs (ffjavascript) and gnark-crypto share for BLS12-381.

// snarkjsCurve is snarkjs' name for BLS12-381.
const snarkjsCurve = "bls12381"

type snarkjsProof struct {
	PiA      []string   `json:"pi_a"`
	PiB      [][]string `json:"pi_b"`
	PiC      []string   `json:"pi_c"`
	Protocol string     `json:"protocol"`
	Curve    string     `json:"curve"`
}

type snarkjsVK struct {
	Protocol      string       `json:"protocol"`
	Curve         string       `json:"curve"`
	NPublic       int          `json:"nPublic"`
	VkAlpha1      []string     `json:"vk_alpha_1"`
	VkBeta2       [][]string   `json:"vk_beta_2"`
	VkGamma2      [][]string   `json:"vk_gamma_2"`
	VkDelta2      [][]string   `json:"vk_delta_2"`
	VkAlphabeta12 [][][]string `json:"vk_alphabeta_12"`
	IC            [][]string   `json:"IC"`
}

// MarshalSnarkJS returns the proof as snarkjs' proof.json.
func (p *Proof) MarshalSnarkJS() ([]byte, error) {
	out, err := json.MarshalIndent(snarkjsProof{
		PiA: g1JSON(&p.A), PiB: g2JSON(&p.B), PiC: g1JSON(&p.C),
		Protocol: "groth16", Curve: snarkjsCurve,
	}, "", " ")
	if err != nil {
		return nil, fmt.Errorf("snarkjs proof: %w", err)
	}
	return out, nil
}

// MarshalSnarkJS returns the key as snarkjs' verification_key.json,
// including vk_alphabeta_12 = e(α, β).
func (vk *VerifyingKey) MarshalSnarkJS() ([]byte, error) {
	ab, err := bls12381.Pair([]bls12381.G1Affine{vk.G1.Alpha}, []bls12381.G2Affine{vk.G2.Beta})
	if err != nil {
		return nil, fmt.Errorf("snarkjs verifying key: e(α, β): %w", err)
	}
	v := snarkjsVK{
		Protocol: "groth16", Curve: snarkjsCurve, NPublic: vk.NbPublicInputs(),
		VkAlpha1: g1JSON(&vk.G1.Alpha),
		VkBeta2:  g2JSON(&vk.G2.Beta), VkGamma2: g2JSON(&vk.G2.Gamma), VkDelta2: g2JSON(&vk.G2.Delta),
		VkAlphabeta12: gtJSON(&ab),
	}
	for i := range vk.G1.IC {
		v.IC = append(v.IC, g1JSON(&vk.G1.IC[i]))
	}
	out, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return nil, fmt.Errorf("snarkjs verifying key: %w", err)
	}
	return out, nil
}

// MarshalPublicSnarkJS returns public inputs as snarkjs' public.json.
func MarshalPublicSnarkJS(publicInputs []fr.Element) ([]byte, error) {
	s := make([]string, len(publicInputs))
	for i := range publicInputs {
		s[i] = frDecimal(&publicInputs[i])
	}
	out, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return nil, fmt.Errorf("snarkjs public inputs: %w", err)
	}
	return out, nil
}

// frDecimal and fpDecimal write e as the canonical decimal of its value.
func frDecimal(e *fr.Element) string { return e.BigInt(new(big.Int)).String() }

func fpDecimal(e *fp.Element) string { return e.BigInt(new(big.Int)).String() }

func fpJSON(e *fp.Element) string { return fpDecimal(e) }

func g1JSON(p *bls12381.G1Affine) []string {
	if p.IsInfinity() {
		return []string{"0", "1", "0"}
	}
	return []string{fpJSON(&p.X), fpJSON(&p.Y), "1"}
}

func e2JSON(e *bls12381.E2) []string { return []string{fpJSON(&e.A0), fpJSON(&e.A1)} }

func g2JSON(p *bls12381.G2Affine) [][]string {
	if p.IsInfinity() {
		return [][]string{{"0", "0"}, {"1", "0"}, {"0", "0"}}
	}
	return [][]string{e2JSON(&p.X), e2JSON(&p.Y), {"1", "0"}}
}

func gtJSON(e *bls12381.GT) [][][]string {
	return [][][]string{
		{e2JSON(&e.C0.B0), e2JSON(&e.C0.B1), e2JSON(&e.C0.B2)},
		{e2JSON(&e.C1.B0), e2JSON(&e.C1.B1), e2JSON(&e.C1.B2)},
	}
}
