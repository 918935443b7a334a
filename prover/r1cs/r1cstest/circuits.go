package r1cstest

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// Cubic proves knowledge of X with X³ + X + 5 = Y, Y public.
type Cubic struct {
	X, Y fr.Element
}

// NewCubic returns a satisfied Cubic for x.
func NewCubic(x uint64) *Cubic {
	c := &Cubic{}
	c.X.SetUint64(x)
	c.Y = CubicOf(c.X)
	return c
}

// CubicOf returns x³ + x + 5.
func CubicOf(x fr.Element) fr.Element {
	var y, five fr.Element
	y.Square(&x).Mul(&y, &x).Add(&y, &x)
	five.SetUint64(5)
	return *y.Add(&y, &five)
}

// Define implements r1cs.Circuit.
func (c *Cubic) Define(api r1cs.API) error {
	y := api.Public(c.Y)
	x := api.Private(c.X)
	defer api.Namespace("cubic")()
	xv := api.Value(x)
	var sq fr.Element
	sq.Square(&xv)
	x2 := api.Private(sq)
	api.Enforce(r1cs.V(x), r1cs.V(x), r1cs.V(x2))
	var cube fr.Element
	cube.Mul(&sq, &xv)
	x3 := api.Private(cube)
	pop := api.Namespace("cube")
	api.Enforce(r1cs.V(x2), r1cs.V(x), r1cs.V(x3))
	pop()
	sum := r1cs.V(x3).Add(x).AddLC(r1cs.ConstUint64(5))
	api.Enforce(sum, r1cs.V(r1cs.One), r1cs.V(y))
	return nil
}

// MulChain enforces N steps x_{i+1} = x_i · (x_i + i) from a private seed and
// exposes the last value and the seed's square as public inputs. It has N+1
// constraints, 2 publics besides One, and reuses one LC buffer, so it measures
// the synthesis engine rather than the circuit's allocations.
type MulChain struct {
	N    int
	Seed fr.Element
}

// Define implements r1cs.Circuit.
func (c *MulChain) Define(api r1cs.API) error {
	if c.N < 1 {
		return fmt.Errorf("mulchain: N = %d, want ≥ 1", c.N)
	}
	x := api.Private(c.Seed)
	var sq fr.Element
	sq.Square(&c.Seed)
	sqv := api.Public(sq)
	api.Enforce(r1cs.V(x), r1cs.V(x), r1cs.V(sqv))
	var last fr.Element
	if api.Proving() {
		last = chainValue(c.Seed, c.N)
	}
	out := api.Public(last)
	la, lb, lc := make(r1cs.LC, 0, 2), make(r1cs.LC, 0, 2), make(r1cs.LC, 0, 2)
	var step, cur fr.Element
	for i := 0; i < c.N; i++ {
		step.SetUint64(uint64(i))
		cur = api.Value(x)
		cur.Add(&cur, &step).Mul(&cur, ptr(api.Value(x)))
		next := out
		if i < c.N-1 {
			next = api.Private(cur)
		}
		la = la[:0].Add(x)
		lb = lb[:0].Add(x).AddTerm(step, r1cs.One)
		lc = lc[:0].Add(next)
		api.Enforce(la, lb, lc)
		x = next
	}
	return nil
}

func ptr(e fr.Element) *fr.Element { return &e }

func chainValue(seed fr.Element, n int) fr.Element {
	var step, t fr.Element
	x := seed
	for i := 0; i < n; i++ {
		step.SetUint64(uint64(i))
		t.Add(&x, &step)
		x.Mul(&x, &t)
	}
	return x
}
