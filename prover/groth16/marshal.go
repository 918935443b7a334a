package groth16

import (
	"fmt"
	"io"
	"math/bits"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// WriteTo writes the proof's binary encoding (232 bytes) to w.
func (p *Proof) WriteTo(w io.Writer) (int64, error) {
	e := newEncoder(w, magicProof)
	e.g1(&p.A)
	e.g2(&p.B)
	e.g1(&p.C)
	n, err := e.finish()
	if err != nil {
		return n, fmt.Errorf("write proof: %w", err)
	}
	return n, nil
}

// ReadFrom decodes a proof written by WriteTo; p is changed only on success.
func (p *Proof) ReadFrom(r io.Reader) (int64, error) {
	d := newDecoder(r, magicProof)
	var q Proof
	d.g1(&q.A)
	d.g2(&q.B)
	d.g1(&q.C)
	n, err := d.finish()
	if err != nil {
		return n, fmt.Errorf("read proof: %w", err)
	}
	*p = q
	return n, nil
}

// WriteTo writes the verifying key's binary encoding to w.
func (vk *VerifyingKey) WriteTo(w io.Writer) (int64, error) {
	e := newEncoder(w, magicVK)
	e.g1(&vk.G1.Alpha)
	e.g2(&vk.G2.Beta)
	e.g2(&vk.G2.Gamma)
	e.g2(&vk.G2.Delta)
	e.g1s(vk.G1.IC)
	n, err := e.finish()
	if err != nil {
		return n, fmt.Errorf("write verifying key: %w", err)
	}
	return n, nil
}

// ReadFrom decodes a verifying key written by WriteTo; vk is changed only on
// success.
func (vk *VerifyingKey) ReadFrom(r io.Reader) (int64, error) {
	d := newDecoder(r, magicVK)
	var k VerifyingKey
	d.g1(&k.G1.Alpha)
	d.g2(&k.G2.Beta)
	d.g2(&k.G2.Gamma)
	d.g2(&k.G2.Delta)
	k.G1.IC = d.g1s("IC", -1, true)
	if d.err == nil && len(k.G1.IC) == 0 {
		d.fail("IC is empty")
	}
	n, err := d.finish()
	if err != nil {
		return n, fmt.Errorf("read verifying key: %w", err)
	}
	*vk = k
	return n, nil
}

// WriteTo writes the proving key's binary encoding to w.
func (pk *ProvingKey) WriteTo(w io.Writer) (int64, error) {
	e := newEncoder(w, magicPK)
	e.u32(uint32(pk.DomainSize))
	e.u32(uint32(pk.NbPublic))
	e.u32(uint32(pk.NbPrivate))
	e.g1(&pk.G1.Alpha)
	e.g1(&pk.G1.Beta)
	e.g1(&pk.G1.Delta)
	e.g2(&pk.G2.Beta)
	e.g2(&pk.G2.Delta)
	e.bools(pk.InfinityA)
	e.bools(pk.InfinityB)
	e.g1s(pk.G1.A)
	e.g1s(pk.G1.B)
	e.g1s(pk.G1.L)
	e.g1s(pk.G1.H)
	e.g2s(pk.G2.B)
	n, err := e.finish()
	if err != nil {
		return n, fmt.Errorf("write proving key: %w", err)
	}
	return n, nil
}

// ReadFrom decodes a proving key written by WriteTo, checking every length
// against the header counts; pk is changed only on success. Its point
// slices are checked to lie on the curve but, for load speed, not to lie in
// the prime-order subgroup: a proving key only shapes the prover's own
// output, which Verify checks in full, and the checksum catches corruption.
func (pk *ProvingKey) ReadFrom(r io.Reader) (int64, error) {
	d := newDecoder(r, magicPK)
	var k ProvingKey
	k.DomainSize, k.NbPublic, k.NbPrivate = int(d.u32()), int(d.u32()), int(d.u32())
	if d.err == nil && (k.DomainSize < 2 || bits.OnesCount(uint(k.DomainSize)) != 1 ||
		k.NbPublic < 1 || k.NbPublic > k.DomainSize || k.NbVariables() > maxPoints) {
		d.fail("bad shape: domain %d, %d public, %d private", k.DomainSize, k.NbPublic, k.NbPrivate)
	}
	d.g1(&k.G1.Alpha)
	d.g1(&k.G1.Beta)
	d.g1(&k.G1.Delta)
	d.g2(&k.G2.Beta)
	d.g2(&k.G2.Delta)
	k.InfinityA = d.bools("InfinityA", k.NbVariables())
	k.InfinityB = d.bools("InfinityB", k.NbVariables())
	k.G1.A = d.g1s("A", countFalse(k.InfinityA), false)
	k.G1.B = d.g1s("B1", countFalse(k.InfinityB), false)
	// L and H share one array (see lhBases); it is allocated only once their
	// bytes have arrived, so a forged count cannot force a huge allocation.
	rawL, _ := d.points("L", k.NbPrivate, g1Size)
	rawH, _ := d.points("H", k.DomainSize-1, g1Size)
	if d.err == nil {
		k.setLH(make([]bls12381.G1Affine, k.NbPrivate+k.DomainSize-1))
		d.decodeG1("L", rawL, k.G1.L, false)
		d.decodeG1("H", rawH, k.G1.H, false)
	}
	k.G2.B = d.g2s("B2", countFalse(k.InfinityB), false)
	n, err := d.finish()
	if err != nil {
		return n, fmt.Errorf("read proving key: %w", err)
	}
	*pk = k
	return n, nil
}

func countFalse(v []bool) int {
	n := 0
	for _, b := range v {
		if !b {
			n++
		}
	}
	return n
}
