package r1cs_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

// rowsCircuit enforces x·y = p and (x + y)·1 = s at the top level and in
// two segments, through Direct's values where it is offered and through
// the combinations otherwise. wrong makes the direct p off by one.
type rowsCircuit struct {
	x, y   uint64
	wrong  bool
	direct atomic.Int32 // Define calls (top level and segments) that got Rows
	calls  atomic.Int32
}

func (c *rowsCircuit) rows(api r1cs.API) error {
	c.calls.Add(1)
	var x, y, p, s fr.Element
	x.SetUint64(c.x)
	y.SetUint64(c.y)
	p.Mul(&x, &y)
	s.Add(&x, &y)
	vx, vy := api.Private(x), api.Private(y)
	vp, vs := api.Private(p), api.Private(s)
	if rows := r1cs.Direct(api); rows != nil {
		c.direct.Add(1)
		if c.wrong {
			p.Add(&p, &montOne)
		}
		rows.EnforceValues(&x, &y, &p)
		rows.EnforceValues(&s, &montOne, &s)
		return nil
	}
	api.Enforce(r1cs.V(vx), r1cs.V(vy), r1cs.V(vp))
	api.Enforce(r1cs.V(vx).Add(vy), r1cs.V(r1cs.One), r1cs.V(vs))
	return nil
}

var montOne = fr.One()

func (c *rowsCircuit) Define(api r1cs.API) error {
	if err := c.rows(api); err != nil {
		return err
	}
	seg := r1cs.Segment{Private: 4, Constraints: 2, Define: c.rows}
	return r1cs.Parallel(api, []r1cs.Segment{seg, seg})
}

func TestDirectRows(t *testing.T) {
	c := &rowsCircuit{x: 6, y: 7}
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	assert.Zero(t, c.direct.Load(), "shape mode records combinations: no Rows")
	require.Equal(t, 6, sys.NbConstraints)

	for _, workers := range []int{1, 2} {
		c := &rowsCircuit{x: 6, y: 7}
		direct, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithWorkers(workers))
		require.NoError(t, err)
		assert.Equal(t, c.calls.Load(), c.direct.Load(), "workers=%d: every Define, segments too, gets Rows", workers)
		require.NoError(t, r1cstest.CheckAgainstMatrices(sys, direct), "direct rows are the matrices' rows")

		c = &rowsCircuit{x: 6, y: 7}
		combos, err := r1cs.Solve(c, r1cs.WithShape(sys), r1cs.WithWorkers(workers), r1cs.WithCombinationRows())
		require.NoError(t, err)
		assert.Zero(t, c.direct.Load(), "workers=%d: WithCombinationRows offers no Rows, segments included", workers)
		assert.Equal(t, combos, direct, "workers=%d", workers)
	}

	_, err = r1cs.Solve(&rowsCircuit{x: 6, y: 7, wrong: true})
	var unsat *r1cs.UnsatisfiedError
	require.True(t, errors.As(err, &unsat), "a wrong direct value is an unsatisfied row: %v", err)
	assert.Equal(t, 0, unsat.Index)
	var want fr.Element
	want.SetUint64(43)
	assert.Equal(t, want, unsat.C)
}

type wrappedAPI struct{ r1cs.API }

type defineFunc func(api r1cs.API) error

func (f defineFunc) Define(api r1cs.API) error { return f(api) }

func TestDirectIsNilForAWrappingAPI(t *testing.T) {
	var inner, outer bool
	_, err := r1cs.Solve(defineFunc(func(api r1cs.API) error {
		inner, outer = r1cs.Direct(api) != nil, r1cs.Direct(wrappedAPI{api}) != nil
		return nil
	}))
	require.NoError(t, err)
	assert.True(t, inner)
	assert.False(t, outer, "a wrapper (a test tampering with witnesses) sees every combination")
}
