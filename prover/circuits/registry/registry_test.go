package registry

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

func TestResolveErrorsNameTheField(t *testing.T) {
	r := Default()
	cases := []struct {
		id     string
		params map[string]uint64
		want   string
	}{
		{"nope", nil, "circuit.id"},
		{"porep-synth", nil, "circuit.params.constraints: missing"},
		{"porep-synth", map[string]uint64{"constraints": 10}, "circuit.params.constraints: 10 out of range"},
		{"porep-synth", map[string]uint64{"constraints": 4096, "depth": 3}, "circuit.params.depth: unknown"},
		{"sha256", map[string]uint64{"bytes": 0}, "circuit.params.bytes"},
	}
	for _, c := range cases {
		_, err := r.Resolve(c.id, c.params)
		require.Error(t, err, c.id)
		assert.ErrorIs(t, err, ErrInvalid)
		assert.Contains(t, err.Error(), c.want)
	}
	_, err := r.Resolve("nope", nil)
	assert.ErrorIs(t, err, ErrUnknownCircuit)
}

// TestResolveNamesEveryProblem: one error, every problem in it.
func TestResolveNamesEveryProblem(t *testing.T) {
	_, err := Default().Resolve("sha256", map[string]uint64{"depth": 3, "constraints": 100})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalid)
	assert.Equal(t, "invalid request: circuit.params.bytes: missing (message length, 1..65536); "+
		"circuit.params.constraints: unknown parameter of sha256 (it takes bytes); "+
		"circuit.params.depth: unknown parameter of sha256 (it takes bytes)", err.Error())
}

// TestDefaultsResolve: every parameter's default is within its range, and
// the circuit resolves and makes an example input with the defaults.
func TestDefaultsResolve(t *testing.T) {
	defs := Default().Definitions()
	require.Len(t, defs, len(Default().IDs()))
	for _, d := range defs {
		params := map[string]uint64{}
		for _, p := range d.Params {
			assert.True(t, p.Min <= p.Default && p.Default <= p.Max, "%s.%s default %d outside %d..%d", d.ID, p.Name, p.Default, p.Min, p.Max)
			params[p.Name] = p.Default
		}
		c, err := Default().Resolve(d.ID, params)
		require.NoError(t, err, d.ID)
		in, err := c.Example(1)
		require.NoError(t, err, d.ID)
		assert.NoError(t, c.Check(in), d.ID)
	}
}

func TestKeyIsCanonical(t *testing.T) {
	c, err := Default().Resolve("porep-synth", map[string]uint64{"constraints": 4096})
	require.NoError(t, err)
	assert.Equal(t, "porep-synth/constraints=4096", c.Key)
}

// TestExamplesSolve builds every circuit from its example input and checks
// that the witness satisfies it, and that the shape is the same for two
// inputs (the key depends on params only).
func TestExamplesSolve(t *testing.T) {
	r := Default()
	for _, tc := range []struct {
		id     string
		params map[string]uint64
	}{
		{"porep-synth", map[string]uint64{"constraints": 2048}},
		{"sha256", map[string]uint64{"bytes": 80}},
		{"poseidon-merkle", map[string]uint64{"depth": 3}},
	} {
		t.Run(tc.id, func(t *testing.T) {
			c, err := r.Resolve(tc.id, tc.params)
			require.NoError(t, err)
			var sys *r1cs.System
			for seed := int64(1); seed <= 2; seed++ {
				in, err := c.Example(seed)
				require.NoError(t, err)
				require.Len(t, in, c.InputSize())
				circ, err := c.Circuit(in)
				require.NoError(t, err)
				if sys == nil {
					sys, err = r1cs.Compile(circ)
					require.NoError(t, err)
				}
				_, err = r1cs.Solve(circ, r1cs.WithShape(sys))
				require.NoError(t, err, "seed %d", seed)
			}
		})
	}
}

func TestBadInputs(t *testing.T) {
	r := Default()
	c, err := r.Resolve("poseidon-merkle", map[string]uint64{"depth": 2})
	require.NoError(t, err)
	good, err := c.Example(7)
	require.NoError(t, err)

	_, err = c.Circuit(good[:len(good)-1])
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "input:")

	bad := append([]byte(nil), good...)
	mod := fr.Modulus().Bytes()
	copy(bad[8+32:8+64], leftPad(mod)) // first sibling = r: not canonical
	_, err = c.Circuit(bad)
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "siblings[0][0]")

	bad = append([]byte(nil), good...)
	bad[7] = 0xff // index far beyond the 64 leaves
	_, err = c.Circuit(bad)
	require.ErrorIs(t, err, ErrInvalid)
	assert.Contains(t, err.Error(), "index")
}

func leftPad(b []byte) []byte {
	out := make([]byte, 32)
	copy(out[32-len(b):], b)
	return out
}

func TestCountsWithoutCompiling(t *testing.T) {
	c, err := Default().Resolve("porep-synth", map[string]uint64{"constraints": 4096})
	require.NoError(t, err)
	got, known, err := c.Counts()
	require.NoError(t, err)
	require.True(t, known)
	in, err := c.Example(3)
	require.NoError(t, err)
	circ, err := c.Circuit(in)
	require.NoError(t, err)
	sys, err := r1cs.Compile(circ)
	require.NoError(t, err)
	assert.Equal(t, [3]int{sys.NbPublic, sys.NbPrivate, sys.NbConstraints}, [3]int{got.NbPublic, got.NbPrivate, got.NbConstraints})
	require.NotNil(t, got.Columns, "porep-synth knows its column densities too")

	s, err := Default().Resolve("sha256", map[string]uint64{"bytes": 64})
	require.NoError(t, err)
	_, known, err = s.Counts()
	require.NoError(t, err)
	assert.False(t, known, "sha256 leaves its counts to the compile")
}
