package gpu

import (
	"fmt"
	"math/bits"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The model below executes the pass plan as cuda/kernels/ntt.cu does (same
// index arithmetic, chunks and twiddle exponents, same inverse trick), one
// block at a time, so the plan and the kernels' index math are checked
// against gnark-crypto in Go on any machine; ntt_host_test.go runs the
// kernels' own code on the host, and the GPU tests run it on the device.

// modelTwiddles returns W[i] = ω^i, i < n/2, for the gnark domain of size n.
func modelTwiddles(logN uint32) []fr.Element {
	d := fft.NewDomain(uint64(1) << logN)
	w := make([]fr.Element, max(1, (1<<logN)/2))
	w[0].SetOne()
	for i := 1; i < len(w); i++ {
		w[i].Mul(&w[i-1], &d.Generator)
	}
	return w
}

// modelScale is a factor table pair: factor(j) = lo[j mod 2^s]·hi[j >> s].
type modelScale struct {
	lo, hi []fr.Element
	s      uint32
}

func newModelScale(logN uint32, base, c fr.Element) modelScale {
	s := splitLog(logN)
	lo := make([]fr.Element, 1<<s)
	hi := make([]fr.Element, 1<<(logN-s))
	powTable(lo, base, fr.One())
	var step fr.Element
	step.Set(&base)
	for range s {
		step.Square(&step)
	}
	powTable(hi, step, c)
	return modelScale{lo: lo, hi: hi, s: s}
}

func powTable(t []fr.Element, base, c fr.Element) {
	t[0] = c
	for i := 1; i < len(t); i++ {
		t[i].Mul(&t[i-1], &base)
	}
}

func (m *modelScale) factor(j uint32) fr.Element {
	var f fr.Element
	f.Mul(&m.lo[j&(1<<m.s-1)], &m.hi[j>>m.s])
	return f
}

func (p pass) addr(block, e uint32) uint32 {
	t := (e >> p.sh) & (1<<p.k - 1)
	gl := e&(1<<p.sh-1) | (e>>(p.sh+p.k))<<p.sh
	g := block<<p.logG | gl
	return (g>>p.lo)<<(p.lo+p.k) | t<<p.lo | g&(1<<p.lo-1)
}

func rev(i, logN uint32) uint32 { return bits.Reverse32(i) >> (32 - logN) }

// chunkBits mirrors ntt.cuh's chunk_bits: the size of chunk c (from bit 0
// up) of a pass of k bits.
func chunkBits(k, c uint32) uint32 {
	nc := (k + 2) / 3
	r := k / nc
	if c >= nc-k%nc {
		r++
	}
	return r
}

// modelPass runs pass p on data, chunk by chunk as the kernels do; scale,
// when non-nil, multiplies each element on load by factor(rev(addr)).
func modelPass(data, w []fr.Element, logN uint32, p pass, dif, inverse bool, scale *modelScale) {
	smem := make([]fr.Element, 1<<(p.k+p.logG))
	nc := (p.k + 2) / 3
	for b := range p.blocks(logN) {
		for e := range smem {
			smem[e] = data[p.addr(b, uint32(e))]
			if scale != nil {
				f := scale.factor(rev(p.addr(b, uint32(e)), logN))
				smem[e].Mul(&smem[e], &f)
			}
		}
		for c := range nc {
			if dif {
				c = nc - 1 - c
			}
			q0 := uint32(0)
			for m := range c {
				q0 += chunkBits(p.k, m)
			}
			modelChunk(smem, w, logN, p, b, q0, chunkBits(p.k, c), dif, inverse)
		}
		for e := range smem {
			data[p.addr(b, uint32(e))] = smem[e]
		}
	}
}

// modelChunk runs the r stages on the pass's bits [q0, q0+r) of block blk,
// item by item, with the kernels' twiddle exponents: abase·2^(L−1−pos) +
// jlow·2^(L−1−i) for the stage on chunk bit i.
func modelChunk(smem, w []fr.Element, logN uint32, p pass, blk, q0, r uint32, dif, inverse bool) {
	bb, s0, n2 := p.sh+q0, logN-1-p.lo-q0, uint32(1)<<(logN-1)
	for v := range uint32(len(smem)) >> r {
		e0 := (v>>bb)<<(bb+r) | v&(1<<bb-1)
		abase := p.addr(blk, e0) & (1<<(p.lo+q0) - 1)
		for st := range r {
			i := st
			if dif {
				i = r - 1 - st
			}
			half := uint32(1) << i
			for jlow := range half {
				ex := abase<<(s0-i) | jlow<<(logN-1-i)
				tw := w[ex]
				if inverse && ex != 0 {
					tw.Neg(&w[n2-ex])
				}
				for j := jlow; j < 1<<r; j += 2 * half {
					butterfly(&smem[e0|j<<bb], &smem[e0|(j+half)<<bb], &tw, dif)
				}
			}
		}
	}
}

// butterfly is the radix-2 step.
func butterfly(x, y, tw *fr.Element, dif bool) {
	u, v := *x, *y
	if dif {
		x.Add(&u, &v)
		y.Sub(&u, &v).Mul(y, tw)
		return
	}
	var t fr.Element
	t.Mul(&v, tw)
	x.Add(&u, &t)
	y.Sub(&u, &t)
}

// modelBitrev permutes data into bit-reversed order, multiplying the element
// that lands at j by factor(j) when scale is non-nil.
func modelBitrev(data []fr.Element, logN uint32, scale *modelScale) {
	for i := range uint32(len(data)) {
		r := rev(i, logN)
		if i > r {
			continue
		}
		data[i], data[r] = data[r], data[i]
		if scale != nil {
			fi, fr_ := scale.factor(i), scale.factor(r)
			data[i].Mul(&data[i], &fi)
			if i != r {
				data[r].Mul(&data[r], &fr_)
			}
		}
	}
}

func modelRun(data, w []fr.Element, logN uint32, dif, inverse bool, first *modelScale) {
	plan := ditPlan(logN)
	if dif {
		plan = difPlan(logN)
	}
	for i, p := range plan {
		var s *modelScale
		if i == 0 {
			s = first
		}
		modelPass(data, w, logN, p, dif, inverse, s)
	}
}

func TestPlanCoversAllBits(t *testing.T) {
	for logN := uint32(1); logN <= MaxLogN; logN++ {
		for _, plan := range [][]pass{difPlan(logN), ditPlan(logN)} {
			var seen uint32
			for _, p := range plan {
				mask := uint32(1<<p.k-1) << p.lo
				assert.Zero(t, seen&mask, "logN %d: overlapping pass %+v", logN, p)
				seen |= mask
				assert.LessOrEqual(t, p.k+p.logG, uint32(logBlockElems))
				assert.LessOrEqual(t, p.k+p.logG, logN)
				assert.LessOrEqual(t, p.threads(), uint32(maxThreads))
				assert.Equal(t, uint32(1)<<max(p.k+p.logG, logRegElems), p.threads()<<logRegElems,
					"logN %d: one thread per register set", logN)
				var bits uint32
				for c := range (p.k + 2) / 3 {
					r := chunkBits(p.k, c)
					assert.True(t, r >= 1 && r <= logRegElems, "logN %d: chunk of %d bits", logN, r)
					bits += r
				}
				assert.Equal(t, p.k, bits, "logN %d: chunks cover the pass", logN)
			}
			assert.Equal(t, uint32(1<<logN-1), seen, "logN %d", logN)
		}
	}
}

func TestModelMatchesGnark(t *testing.T) {
	top := uint32(19) // 2^19 is the first size that needs three passes
	if testing.Short() {
		top = 12
	}
	for logN := uint32(1); logN <= top; logN++ {
		n := 1 << logN
		t.Run(fmt.Sprintf("2^%d", logN), func(t *testing.T) {
			w := modelTwiddles(logN)
			a := newVector(t, n, inputRandom)

			fwd := append([]fr.Element(nil), a...)
			modelRun(fwd, w, logN, true, false, nil)
			modelBitrev(fwd, logN, nil)
			require.Equal(t, refNTT(a, false), fwd, "forward DIF")

			dit := append([]fr.Element(nil), a...)
			modelBitrev(dit, logN, nil)
			modelRun(dit, w, logN, false, false, nil)
			require.Equal(t, refNTT(a, false), dit, "forward DIT")

			d := fft.NewDomain(uint64(n))
			inv := append([]fr.Element(nil), a...)
			modelRun(inv, w, logN, true, true, nil)
			one := fr.One()
			sc := newModelScale(logN, one, d.CardinalityInv)
			modelBitrev(inv, logN, &sc)
			require.Equal(t, refINTT(a, false), inv, "inverse")

			b, c := newVector(t, n, inputRandom), newVector(t, n, inputRandom)
			require.Equal(t, refQuotientH(a, b, c), modelQuotientH(a, b, c, w, logN), "quotient")
		})
	}
}

// modelQuotientH is the H pipeline the Backend runs on the GPU.
func modelQuotientH(a, b, c, w []fr.Element, logN uint32) []fr.Element {
	d := fft.NewDomain(uint64(1) << logN)
	fwd := newModelScale(logN, d.FrMultiplicativeGen, d.CardinalityInv)
	vs := [3][]fr.Element{}
	for i, v := range [][]fr.Element{a, b, c} {
		vs[i] = append([]fr.Element(nil), v...)
		modelRun(vs[i], w, logN, true, true, nil)
		modelRun(vs[i], w, logN, false, false, &fwd)
	}
	den := cosetVanishingInv(1 << logN)
	h := vs[0]
	for i := range h {
		h[i].Mul(&h[i], &vs[1][i]).Sub(&h[i], &vs[2][i]).Mul(&h[i], &den)
	}
	modelRun(h, w, logN, true, true, nil)
	back := newModelScale(logN, d.FrMultiplicativeGenInv, d.CardinalityInv)
	modelBitrev(h, logN, &back)
	return h
}
