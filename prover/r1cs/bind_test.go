package r1cs_test

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// bindCircuit binds 3x + 5y + 7, squares the bound variable and multiplies
// the square by x + 1, either through Bind and Product or through the plain
// sequences they stand for.
type bindCircuit struct {
	x, y  uint64
	plain bool
}

func (c bindCircuit) Define(api r1cs.API) error {
	x := api.Private(fr.NewElement(c.x))
	y := api.Private(fr.NewElement(c.y))
	lc := r1cs.LC{}.AddTerm(fr.NewElement(3), x).AddTerm(fr.NewElement(5), y).AddLC(r1cs.ConstUint64(7))
	var v r1cs.Variable
	if c.plain {
		v = api.Private(api.Eval(lc))
		api.Enforce(lc, r1cs.V(r1cs.One), r1cs.V(v))
	} else {
		v = r1cs.Bind(api, lc)
	}
	bv := r1cs.V(v)
	x1 := r1cs.V(x).AddLC(r1cs.ConstUint64(1))
	if c.plain {
		vv := api.Value(v)
		sq := api.Private(*new(fr.Element).Square(&vv))
		api.Enforce(bv, bv, r1cs.V(sq))
		sqv, xv := api.Value(sq), api.Eval(x1)
		p := api.Private(*new(fr.Element).Mul(&sqv, &xv))
		api.Enforce(r1cs.V(sq), x1, r1cs.V(p))
	} else {
		sq := r1cs.Product(api, bv, bv)
		r1cs.Product(api, r1cs.V(sq), x1)
	}
	return nil
}

// wrapped hides the solver's one-step bind behind a forwarding API.
type wrapped struct{ r1cs.API }

type viaWrapper struct{ inner r1cs.Circuit }

func (c viaWrapper) Define(api r1cs.API) error { return c.inner.Define(wrapped{api}) }

func TestBindAndProductEqualPlainSequences(t *testing.T) {
	for _, xy := range [][2]uint64{{0, 0}, {2, 9}, {1 << 40, 3}} {
		bound, plain := bindCircuit{x: xy[0], y: xy[1]}, bindCircuit{x: xy[0], y: xy[1], plain: true}
		sysB, err := r1cs.Compile(bound)
		require.NoError(t, err)
		sysP, err := r1cs.Compile(plain)
		require.NoError(t, err)
		assert.Equal(t, sysP, sysB, "same constraint rows")
		assert.Equal(t, 3, sysB.NbConstraints)

		want, err := r1cs.Solve(plain, r1cs.WithShape(sysP))
		require.NoError(t, err)
		for _, c := range []r1cs.Circuit{bound, viaWrapper{bound}} {
			got, err := r1cs.Solve(c, r1cs.WithShape(sysB))
			require.NoError(t, err)
			assert.Equal(t, want, got)
			require.NoError(t, r1cstest.CheckAgainstMatrices(sysB, got))
		}
		var exp, sq, p fr.Element
		exp.SetUint64(3*xy[0] + 5*xy[1] + 7)
		sq.Square(&exp)
		p.SetUint64(xy[0] + 1)
		p.Mul(&p, &sq)
		assert.Equal(t, []fr.Element{fr.NewElement(xy[0]), fr.NewElement(xy[1]), exp, sq, p}, want.Private)
	}
}
