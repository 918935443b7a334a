// Package circuittest holds helpers shared by the circuit tests: a witness
// tampering wrapper around r1cs.API, a wrapper circuit that applies it, and
// seeded random field elements.
package circuittest

import (
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// TamperAPI forwards to API but adds 1 to the value of the Target-th private
// variable allocated through it (counting from 0), so that a circuit's own
// witness computation is corrupted at one place.
type TamperAPI struct {
	r1cs.API
	Target int
	seen   int
}

// Private implements r1cs.API.
func (t *TamperAPI) Private(value fr.Element) r1cs.Variable {
	if t.seen == t.Target {
		one := fr.One()
		value.Add(&value, &one)
	}
	t.seen++
	return t.API.Private(value)
}

// Tampered is a circuit that runs Inner through a TamperAPI.
type Tampered struct {
	Inner  r1cs.Circuit
	Target int
}

// Define implements r1cs.Circuit.
func (c *Tampered) Define(api r1cs.API) error {
	return c.Inner.Define(&TamperAPI{API: api, Target: c.Target})
}

// CountPrivates returns how many private variables c allocates.
func CountPrivates(t testing.TB, c r1cs.Circuit) int {
	t.Helper()
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	return sys.NbPrivate
}

// RequireUnsatisfied asserts that err reports an unsatisfied constraint whose
// namespace path starts with prefix.
func RequireUnsatisfied(t testing.TB, err error, prefix string) {
	t.Helper()
	require.Error(t, err)
	var ue *r1cs.UnsatisfiedError
	require.True(t, errors.As(err, &ue), "want *r1cs.UnsatisfiedError, got %v", err)
	require.True(t, strings.HasPrefix(ue.Path, prefix), "unsatisfied constraint at %q, want prefix %q", ue.Path, prefix)
}

// Elements returns n field elements drawn from rng.
func Elements(rng *rand.Rand, n int) []fr.Element {
	out := make([]fr.Element, n)
	var buf [64]byte
	for i := range out {
		rng.Read(buf[:])
		out[i].SetBytes(buf[:]) // reduced modulo p; the bias is negligible
	}
	return out
}
