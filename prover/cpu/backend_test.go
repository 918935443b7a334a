package cpu_test

import (
	"context"
	"fmt"
	"math/big"
	"sync/atomic"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/cpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

var _ groth16.Backend = (*cpu.Backend)(nil)

func newBackend(t testing.TB) *cpu.Backend {
	b, err := cpu.New()
	require.NoError(t, err)
	return b
}

func randomVector(n int) []fr.Element {
	v := make([]fr.Element, n)
	for i := range v {
		v[i].MustSetRandom()
	}
	return v
}

// naiveInterpolate returns the coefficients of the polynomial taking values
// evals on ω^0..ω^{n−1}: p_k = (1/n)·Σ_i evals_i·ω^{−ik} (a plain O(n²) DFT).
func naiveInterpolate(evals []fr.Element, omega fr.Element) []fr.Element {
	n := len(evals)
	var omegaInv, nInv fr.Element
	omegaInv.Inverse(&omega)
	nInv.SetUint64(uint64(n)).Inverse(&nInv)
	out := make([]fr.Element, n)
	var wk fr.Element // ω^{−k}
	wk.SetOne()
	for k := range out {
		var x fr.Element // ω^{−ik}
		x.SetOne()
		for i := range evals {
			var t fr.Element
			t.Mul(&evals[i], &x)
			out[k].Add(&out[k], &t)
			x.Mul(&x, &wk)
		}
		out[k].Mul(&out[k], &nInv)
		wk.Mul(&wk, &omegaInv)
	}
	return out
}

func polyMul(p, q []fr.Element) []fr.Element {
	out := make([]fr.Element, len(p)+len(q)-1)
	for i := range p {
		for j := range q {
			var t fr.Element
			t.Mul(&p[i], &q[j])
			out[i+j].Add(&out[i+j], &t)
		}
	}
	return out
}

// naiveQuotient computes (a·b − c)/(X^n − 1) by schoolbook multiplication and
// long division; it fails the test if the remainder is nonzero.
func naiveQuotient(t *testing.T, a, b, c []fr.Element) []fr.Element {
	n := len(a)
	omega, err := fft.Generator(uint64(n))
	require.NoError(t, err)
	num := polyMul(naiveInterpolate(a, omega), naiveInterpolate(b, omega))
	pc := naiveInterpolate(c, omega)
	for i := range pc {
		num[i].Sub(&num[i], &pc[i])
	}
	q := make([]fr.Element, n) // deg(num) ≤ 2n−2, so deg(q) ≤ n−2
	for d := len(num) - 1; d >= n; d-- {
		q[d-n] = num[d]
		num[d-n].Add(&num[d-n], &num[d]) // X^d = X^{d−n}·(X^n − 1) + X^{d−n}
		num[d].SetZero()
	}
	for i := 0; i < n; i++ {
		require.True(t, num[i].IsZero(), "remainder coefficient %d is nonzero", i)
	}
	return q
}

func TestQuotientHMatchesNaive(t *testing.T) {
	be := newBackend(t)
	for _, n := range []int{2, 4, 8, 16, 64} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			a, b := randomVector(n), randomVector(n)
			c := make([]fr.Element, n)
			for i := range c {
				c[i].Mul(&a[i], &b[i])
			}
			want := naiveQuotient(t, a, b, c)
			got, err := be.QuotientH(context.Background(), clone(a), clone(b), clone(c))
			require.NoError(t, err)
			require.Len(t, got, n)
			for i := range want {
				assert.True(t, got[i].Equal(&want[i]), "coefficient %d", i)
			}
			assert.True(t, got[n-1].IsZero(), "top coefficient of a satisfied system")
		})
	}
}

func TestQuotientHRejectsBadSizes(t *testing.T) {
	be := newBackend(t)
	for _, n := range []int{0, 1, 3, 7, 9} {
		_, err := be.QuotientH(context.Background(), make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n))
		assert.ErrorIs(t, err, cpu.ErrSize, "n=%d", n)
	}
	_, err := be.QuotientH(context.Background(), make([]fr.Element, 4), make([]fr.Element, 4), make([]fr.Element, 2))
	assert.ErrorIs(t, err, cpu.ErrSize)
}

func clone(v []fr.Element) []fr.Element { return append([]fr.Element(nil), v...) }

func randomG1(n int) []bls12381.G1Affine {
	_, _, g, _ := bls12381.Generators()
	return bls12381.BatchScalarMultiplicationG1(&g, randomVector(n))
}

func randomG2(n int) []bls12381.G2Affine {
	_, _, _, g := bls12381.Generators()
	return bls12381.BatchScalarMultiplicationG2(&g, randomVector(n))
}

// naiveMSMG1 sums scalars[i]·bases[i] by double-and-add over each scalar's bits.
func naiveMSMG1(bases []bls12381.G1Affine, scalars []fr.Element) bls12381.G1Affine {
	var sum bls12381.G1Jac
	sum.X.SetOne()
	sum.Y.SetOne()
	for i := range bases {
		var k big.Int
		scalars[i].BigInt(&k)
		var acc, base bls12381.G1Jac
		acc.X.SetOne()
		acc.Y.SetOne()
		base.FromAffine(&bases[i])
		for bit := k.BitLen() - 1; bit >= 0; bit-- {
			acc.DoubleAssign()
			if k.Bit(bit) == 1 {
				acc.AddAssign(&base)
			}
		}
		sum.AddAssign(&acc)
	}
	var out bls12381.G1Affine
	out.FromJacobian(&sum)
	return out
}

func naiveMSMG2(bases []bls12381.G2Affine, scalars []fr.Element) bls12381.G2Affine {
	var sum bls12381.G2Jac
	sum.X.SetOne()
	sum.Y.SetOne()
	for i := range bases {
		var k big.Int
		scalars[i].BigInt(&k)
		var acc, base bls12381.G2Jac
		acc.X.SetOne()
		acc.Y.SetOne()
		base.FromAffine(&bases[i])
		for bit := k.BitLen() - 1; bit >= 0; bit-- {
			acc.DoubleAssign()
			if k.Bit(bit) == 1 {
				acc.AddAssign(&base)
			}
		}
		sum.AddAssign(&acc)
	}
	var out bls12381.G2Affine
	out.FromJacobian(&sum)
	return out
}

// msmScalars returns random scalars with the awkward values 0, 1 and −1
// mixed in.
func msmScalars(n int) []fr.Element {
	s := randomVector(n)
	for i := range s {
		switch i % 7 {
		case 1:
			s[i].SetZero()
		case 3:
			s[i].SetOne()
		case 5:
			s[i].SetOne().Neg(&s[i])
		}
	}
	return s
}

func TestMSMMatchesNaive(t *testing.T) {
	be := newBackend(t)
	for _, n := range []int{0, 1, 2, 7, 8, 9, 31, 32, 33, 255, 4097} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			scalars := msmScalars(n)
			g1 := randomG1(n)
			// Keys hold points at infinity for unused private variables.
			for i := 4; i < n; i += 11 {
				g1[i].SetInfinity()
			}
			got1, err := be.MSMG1(context.Background(), g1, scalars)
			require.NoError(t, err)
			var aff1 bls12381.G1Affine
			aff1.FromJacobian(&got1)
			want1 := naiveMSMG1(g1, scalars)
			assert.True(t, aff1.Equal(&want1), "G1")

			g2 := randomG2(n)
			for i := 4; i < n; i += 11 {
				g2[i].SetInfinity()
			}
			got2, err := be.MSMG2(context.Background(), g2, scalars)
			require.NoError(t, err)
			var aff2 bls12381.G2Affine
			aff2.FromJacobian(&got2)
			want2 := naiveMSMG2(g2, scalars)
			assert.True(t, aff2.Equal(&want2), "G2")
		})
	}
}

func TestMSMRejectsLengthMismatch(t *testing.T) {
	be := newBackend(t)
	_, err := be.MSMG1(context.Background(), randomG1(3), randomVector(2))
	assert.ErrorIs(t, err, cpu.ErrSize)
	_, err = be.MSMG2(context.Background(), randomG2(1), randomVector(2))
	assert.ErrorIs(t, err, cpu.ErrSize)
}

func TestOptionsValidate(t *testing.T) {
	_, err := cpu.New(cpu.WithNbTasks(0))
	assert.Error(t, err)
	b, err := cpu.New(cpu.WithNbTasks(1))
	require.NoError(t, err)
	got, err := b.MSMG1(context.Background(), randomG1(5), randomVector(5))
	require.NoError(t, err)
	assert.False(t, got.Z.IsZero())
}

func BenchmarkQuotientH(b *testing.B) {
	be := newBackend(b)
	for _, logN := range []int{10, 14, 16} {
		n := 1 << logN
		a, bv, c := randomVector(n), randomVector(n), randomVector(n)
		b.Run(fmt.Sprintf("2^%d", logN), func(b *testing.B) {
			be.Domain(uint64(n)) // build the twiddles outside the timing
			for b.Loop() {
				if _, err := be.QuotientH(context.Background(), a, bv, c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkMSM(b *testing.B) {
	be := newBackend(b)
	for _, logN := range []int{10, 14, 16} {
		n := 1 << logN
		scalars := randomVector(n)
		g1 := randomG1(n)
		b.Run(fmt.Sprintf("G1/2^%d", logN), func(b *testing.B) {
			for b.Loop() {
				if _, err := be.MSMG1(context.Background(), g1, scalars); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
		})
		g2 := randomG2(n)
		b.Run(fmt.Sprintf("G2/2^%d", logN), func(b *testing.B) {
			for b.Loop() {
				if _, err := be.MSMG2(context.Background(), g2, scalars); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "points/s")
		})
	}
}

// countdown is a context that turns cancelled at its (live+1)-th Err call,
// so that a test stops a call at each of its checks in turn.
type countdown struct {
	context.Context
	live  int32
	calls atomic.Int32
}

func (c *countdown) Err() error {
	if c.calls.Add(1) > c.live {
		return context.Canceled
	}
	return nil
}

// A quotient stopped at each of its checks returns context.Canceled, and
// the backend then computes the right quotient.
func TestQuotientHStopsAtEachCheck(t *testing.T) {
	b := newBackend(t)
	const n = 64
	a, bv, c := randomVector(n), randomVector(n), randomVector(n)
	want, err := b.QuotientH(context.Background(), clone(a), clone(bv), clone(c))
	require.NoError(t, err)
	checks := int32(0)
	for live := int32(0); ; live++ {
		ctx := &countdown{Context: context.Background(), live: live}
		got, err := b.QuotientH(ctx, clone(a), clone(bv), clone(c))
		if err == nil {
			assert.Equal(t, want, got, "live for %d checks", live)
			checks = live
			break
		}
		require.ErrorIs(t, err, context.Canceled, "live for %d checks", live)
		require.Less(t, live, int32(20), "the quotient never finished")
	}
	assert.GreaterOrEqual(t, checks, int32(5), "checks before, inside and after the transforms")
	again, err := b.QuotientH(context.Background(), clone(a), clone(bv), clone(c))
	require.NoError(t, err)
	assert.Equal(t, want, again)
}

// MSMs with a done context return its error without computing.
func TestMSMCancelled(t *testing.T) {
	b := newBackend(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.MSMG1(ctx, randomG1(8), msmScalars(8))
	assert.ErrorIs(t, err, context.Canceled)
	_, err = b.MSMG2(ctx, randomG2(8), msmScalars(8))
	assert.ErrorIs(t, err, context.Canceled)
	_, err = b.MSMG1(context.Background(), randomG1(8), msmScalars(8))
	assert.NoError(t, err)
}
