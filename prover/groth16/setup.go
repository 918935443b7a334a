package groth16

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"sync"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/parallel"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// toxic is the secret trapdoor of a setup.
type toxic struct {
	tau, alpha, beta, gamma, delta fr.Element
}

// FixedBaser computes the batched fixed-base scalar multiplications that
// fill a setup's keys: s·base for every s in scalars, in affine coordinates
// with infinity as (0,0), equal point for point to gnark-crypto's
// bls12381.BatchScalarMultiplicationG1/G2 (a base in the prime-order
// subgroup). Implementations must only read base and scalars, and should
// stop once ctx is done. CPUFixedBase is the reference; prover/gpu's
// Backend implements it on the GPU.
type FixedBaser interface {
	FixedBaseG1(ctx context.Context, base *bls12381.G1Affine, scalars []fr.Element) ([]bls12381.G1Affine, error)
	FixedBaseG2(ctx context.Context, base *bls12381.G2Affine, scalars []fr.Element) ([]bls12381.G2Affine, error)
}

// CPUFixedBase is the FixedBaser of Setup: per-call tables of the base's
// multiples and signed digits on every core (fixedbase.go). It holds no
// state, so it is safe for concurrent use; it does not look at ctx.
type CPUFixedBase struct{}

// FixedBaseG1 implements FixedBaser.
func (CPUFixedBase) FixedBaseG1(_ context.Context, base *bls12381.G1Affine, scalars []fr.Element) ([]bls12381.G1Affine, error) {
	return fixedBaseG1(base, scalars), nil
}

// FixedBaseG2 implements FixedBaser.
func (CPUFixedBase) FixedBaseG2(_ context.Context, base *bls12381.G2Affine, scalars []fr.Element) ([]bls12381.G2Affine, error) {
	return fixedBaseG2(base, scalars), nil
}

// Setup generates keys for sys with trapdoor values drawn from rnd, on the
// CPU: SetupWith(context.Background(), sys, rnd, CPUFixedBase{}).
//
// DEVELOPMENT ONLY: whoever knows rnd's output can forge proofs. Setup is for
// tests and benchmarks; production keys come from a multi-party ceremony.
// The domain generator is fft.Generator(n) of gnark-crypto, which every
// Backend's QuotientH must use too.
func Setup(sys *r1cs.System, rnd io.Reader) (*ProvingKey, *VerifyingKey, error) {
	return SetupWith(context.Background(), sys, rnd, CPUFixedBase{})
}

// SetupWith is Setup with the key points computed by fb (nil:
// CPUFixedBase). For the same rnd the keys are identical to Setup's, byte
// for byte, whatever fb is, as long as fb keeps its contract. It stops at
// the next stage (each batch of fixed-base products, as fb allows) once ctx
// is done. Calls share no state; fb decides whether they may overlap.
//
// DEVELOPMENT ONLY, as Setup.
func SetupWith(ctx context.Context, sys *r1cs.System, rnd io.Reader, fb FixedBaser) (*ProvingKey, *VerifyingKey, error) {
	if fb == nil {
		fb = CPUFixedBase{}
	}
	var t toxic
	for _, p := range []*fr.Element{&t.tau, &t.alpha, &t.beta, &t.gamma, &t.delta} {
		var err error
		if *p, err = randomScalar(rnd); err != nil {
			return nil, nil, fmt.Errorf("setup: %w", err)
		}
	}
	n := sys.DomainSize()
	lag, err := lagrangeAt(t.tau, n, sys.NbRows())
	if err != nil {
		return nil, nil, fmt.Errorf("setup: %w", err)
	}
	u := columnSums(&sys.A, sys.Coeffs, lag, sys.NbVariables())
	v := columnSums(&sys.B, sys.Coeffs, lag, sys.NbVariables())
	w := columnSums(&sys.C, sys.Coeffs, lag, sys.NbVariables())

	pk := &ProvingKey{DomainSize: n, NbPublic: sys.NbPublic, NbPrivate: sys.NbPrivate}
	vk := &VerifyingKey{}
	pk.InfinityA, pk.InfinityB = zeroMask(u), zeroMask(v)
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("setup: %w", err)
	}
	keptB := countKept(pk.InfinityB) // both curves' B columns
	if err := fillG1(ctx, fb, pk, vk, &t, u, v, w, n, keptB); err != nil {
		return nil, nil, fmt.Errorf("setup: %w", err)
	}
	if err := fillG2(ctx, fb, pk, vk, &t, v, keptB); err != nil {
		return nil, nil, fmt.Errorf("setup: %w", err)
	}
	return pk, vk, nil
}

// lagrangeAt returns L_i(τ) for i < rows over the domain of size n:
// L_i(τ) = (τ^n − 1)/n · ω^i/(τ − ω^i), on all cores (each chunk of rows
// starts from ω^start and inverts its own denominators).
func lagrangeAt(tau fr.Element, n, rows int) ([]fr.Element, error) {
	omega, err := fft.Generator(uint64(n))
	if err != nil {
		return nil, fmt.Errorf("domain generator for n=%d: %w", n, err)
	}
	var scale, nInv fr.Element
	one := fr.One()
	scale.Exp(tau, big.NewInt(int64(n))).Sub(&scale, &one)
	nInv.SetUint64(uint64(n)).Inverse(&nInv)
	scale.Mul(&scale, &nInv)
	pows := make([]fr.Element, rows)
	den := make([]fr.Element, rows)
	var mu sync.Mutex
	inDomain := -1 // the first row whose ω^i is τ, if any
	parallel.Execute(rows, func(start, end int) {
		var cur fr.Element
		cur.Exp(omega, big.NewInt(int64(start)))
		for i := start; i < end; i++ {
			pows[i] = cur
			den[i].Sub(&tau, &cur)
			if den[i].IsZero() {
				mu.Lock()
				if inDomain < 0 || i < inDomain {
					inDomain = i
				}
				mu.Unlock()
				return
			}
			cur.Mul(&cur, &omega)
		}
		inv := fr.BatchInvert(den[start:end])
		for i := start; i < end; i++ {
			pows[i].Mul(&pows[i], &inv[i-start]).Mul(&pows[i], &scale)
		}
	})
	if inDomain >= 0 {
		return nil, fmt.Errorf("τ lies in the domain (row %d)", inDomain)
	}
	return pows, nil
}

// columnSums returns Σ_i m[i][j]·lag[i] for every column j, on all cores:
// each worker owns a band of columns and reads every row, skipping the
// entries of other bands (a skipped entry costs a compare, a summed one a
// field product), so that no two workers write one column and each column
// sums its entries in row order, as a single pass does.
func columnSums(m *r1cs.Matrix, table, lag []fr.Element, nbVars int) []fr.Element {
	out := make([]fr.Element, nbVars)
	parallel.Execute(nbVars, func(lo, hi int) {
		var t fr.Element
		for i := 0; i < m.Rows(); i++ {
			cols, ids := m.Row(i)
			for k, col := range cols {
				if int(col) < lo || int(col) >= hi {
					continue
				}
				t.Mul(&table[ids[k]], &lag[i])
				out[col].Add(&out[col], &t)
			}
		}
	})
	return out
}

func zeroMask(v []fr.Element) []bool {
	m := make([]bool, len(v))
	for i := range v {
		m[i] = v[i].IsZero()
	}
	return m
}

// fillG1 computes every G1 element of both keys with one batched
// fixed-base multiplication (fb.FixedBaseG1). Its scalars α, β, δ, the A
// and B columns without their zeros, the K column and the H powers are
// written straight into the one vector fb takes (at 2^27 about 21 GB):
// no part is made apart and copied in.
func fillG1(ctx context.Context, fb FixedBaser, pk *ProvingKey, vk *VerifyingKey, t *toxic, u, v, w []fr.Element, n int, keptB kept) error {
	nbPub := pk.NbPublic
	var gammaInv, deltaInv fr.Element
	gammaInv.Inverse(&t.gamma)
	deltaInv.Inverse(&t.delta)
	keptA := countKept(pk.InfinityA)
	na, nb := keptA.n(), keptB.n()
	scalars, rest := scalarsAfter(3+na+nb+len(u)+n-1, t.alpha, t.beta, t.delta)
	keptA.copy(rest, u, pk.InfinityA)
	keptB.copy(rest[na:], v, pk.InfinityB)
	k := rest[na+nb : na+nb+len(u)]
	parallel.Execute(len(k), func(start, end int) {
		for j := start; j < end; j++ {
			var a, b fr.Element
			a.Mul(&t.beta, &u[j])
			b.Mul(&t.alpha, &v[j])
			k[j].Add(&a, &b).Add(&k[j], &w[j])
			if j < nbPub {
				k[j].Mul(&k[j], &gammaInv)
			} else {
				k[j].Mul(&k[j], &deltaInv)
			}
		}
	})
	// h[i] = τ^i·(τ^n − 1)/δ, each chunk from its own τ^start.
	h := rest[na+nb+len(u):]
	var zt0 fr.Element
	one := fr.One()
	zt0.Exp(t.tau, big.NewInt(int64(n))).Sub(&zt0, &one).Mul(&zt0, &deltaInv)
	parallel.Execute(len(h), func(start, end int) {
		var zt fr.Element
		zt.Exp(t.tau, big.NewInt(int64(start))).Mul(&zt, &zt0)
		for i := start; i < end; i++ {
			h[i] = zt
			zt.Mul(&zt, &t.tau)
		}
	})
	_, _, g1, _ := bls12381.Generators()
	pts, err := fb.FixedBaseG1(ctx, &g1, scalars)
	if err != nil {
		return fmt.Errorf("fixed-base G1 (%d scalars): %w", len(scalars), err)
	}
	if len(pts) != len(scalars) {
		return fmt.Errorf("fixed-base G1: %d points for %d scalars", len(pts), len(scalars))
	}
	pk.G1.Alpha, pk.G1.Beta, pk.G1.Delta = pts[0], pts[1], pts[2]
	pts = pts[3:]
	pk.G1.A, pts = pts[:na:na], pts[na:]
	pk.G1.B, pts = pts[:nb:nb], pts[nb:]
	vk.G1.IC, pts = pts[:nbPub:nbPub], pts[nbPub:]
	pk.setLH(pts)
	vk.G1.Alpha = pk.G1.Alpha
	return nil
}

// fillG2 computes every G2 element of both keys the same way
// (fb.FixedBaseG2): β, γ, δ and the B column without its zeros.
func fillG2(ctx context.Context, fb FixedBaser, pk *ProvingKey, vk *VerifyingKey, t *toxic, v []fr.Element, keptB kept) error {
	scalars, rest := scalarsAfter(3+keptB.n(), t.beta, t.gamma, t.delta)
	keptB.copy(rest, v, pk.InfinityB)
	_, _, _, g2 := bls12381.Generators()
	pts, err := fb.FixedBaseG2(ctx, &g2, scalars)
	if err != nil {
		return fmt.Errorf("fixed-base G2 (%d scalars): %w", len(scalars), err)
	}
	if len(pts) != len(scalars) {
		return fmt.Errorf("fixed-base G2: %d points for %d scalars", len(pts), len(scalars))
	}
	pk.G2.Beta, vk.G2.Gamma, pk.G2.Delta = pts[0], pts[1], pts[2]
	pk.G2.B = pts[3:]
	vk.G2.Beta, vk.G2.Delta = pk.G2.Beta, pk.G2.Delta
	return nil
}

// scalarsAfter returns a vector of n scalars that starts with head, and
// the rest of it, for the caller to fill.
func scalarsAfter(n int, head ...fr.Element) (all, rest []fr.Element) {
	all = make([]fr.Element, n)
	copy(all, head)
	return all, all[len(head):]
}
