package r1cs

import "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

// Rows is the proving-mode fast path for a gadget that knows the values of a
// constraint's combinations without evaluating them: bit gates (a·b = c over
// booleans) and packed sums, whose combinations have tens of terms and whose
// values are small integers. Building and evaluating those combinations is
// most of a bit-heavy circuit's solve.
type Rows interface {
	// EnforceValues adds the row that Enforce(a, b, c) would add for
	// combinations with the values va, vb, vc, and checks va·vb = vc the same
	// way. It does not retain its arguments.
	EnforceValues(va, vb, vc *fr.Element)
}

// Direct returns api's Rows in proving mode, or nil: in shape mode (Compile
// needs the combinations), for an API that wraps another (tests that tamper
// with witnesses see every combination), and under WithCombinationRows. A
// gadget calls it once per run and, when it is not nil, passes each row's
// values instead of building its combinations:
//
//	if rows := r1cs.Direct(api); rows != nil {
//		rows.EnforceValues(&va, &vb, &vc)
//	} else {
//		api.Enforce(a, b, c)
//	}
//
// The values must be those of the combinations the gadget would build, or
// the proof is invalid: Solve checks va·vb = vc but cannot check them against
// combinations it never sees. Test a gadget by solving it with and without
// WithCombinationRows and comparing the assignments.
func Direct(api API) Rows {
	if s, ok := api.(*solver); ok && !s.lcRows {
		return s
	}
	return nil
}
