package proverbench

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// exportMagic opens an exported circuit (format version 1).
var exportMagic = [4]byte{'C', 'Z', 'R', '1'}

// WriteCircuit writes the circuit rows of sys and the full assignment of asg
// in the exchange format that the gnark side of the benchmark
// (bench/gnark, its own module) reads. All integers are little-endian
// uint32, field elements 32-byte big-endian canonical:
//
//	"CZR1"
//	nbPublic (One included), nbPrivate, nbConstraints, nbCoeffs
//	nbCoeffs coefficients
//	A, B, C, each: nbTerms, rowPtr[nbConstraints+1], col[nbTerms], coeffID[nbTerms]
//	w[nbPublic + nbPrivate] = (1, publics…, privates…)
//
// Only the circuit's own rows go out: the public-input rows that
// prover/r1cs appends for Groth16 are cuzk's way of making publics
// independent, and gnark's setup has its own. Columns are positions in w,
// as r1cs.System.Column gives them. Everything before w depends on the shape
// alone, so the reader keys its setup cache on a hash of it.
func WriteCircuit(w io.Writer, sys *r1cs.System, asg *r1cs.Assignment) error {
	if len(asg.Public) != sys.NbPublic || len(asg.Private) != sys.NbPrivate {
		return fmt.Errorf("export circuit: assignment has %d publics and %d privates, system %d and %d",
			len(asg.Public), len(asg.Private), sys.NbPublic, sys.NbPrivate)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	le := binary.LittleEndian
	var buf []byte
	buf = append(buf, exportMagic[:]...)
	for _, n := range []int{sys.NbPublic, sys.NbPrivate, sys.NbConstraints, len(sys.Coeffs)} {
		buf = le.AppendUint32(buf, uint32(n))
	}
	bw.Write(buf) // bufio keeps the first error; Flush reports it
	writeElements(bw, sys.Coeffs)
	n := sys.NbConstraints
	for _, m := range []*r1cs.Matrix{&sys.A, &sys.B, &sys.C} {
		terms := m.RowPtr[n]
		writeU32s(bw, []uint32{terms})
		writeU32s(bw, m.RowPtr[:n+1])
		writeU32s(bw, m.Col[:terms])
		writeU32s(bw, m.CoeffID[:terms])
	}
	writeElements(bw, asg.Public)
	writeElements(bw, asg.Private)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export circuit: %w", err)
	}
	return nil
}

func writeU32s(w *bufio.Writer, v []uint32) {
	var b [4]byte
	for _, x := range v {
		binary.LittleEndian.PutUint32(b[:], x)
		w.Write(b[:]) // bufio keeps the first error; Flush reports it
	}
}

func writeElements(w *bufio.Writer, v []fr.Element) {
	for i := range v {
		b := v[i].Bytes()
		w.Write(b[:]) // bufio keeps the first error; Flush reports it
	}
}
