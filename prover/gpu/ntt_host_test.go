package gpu

import (
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/cuda/driver"
)

// emuOp is an operation of testdata/ntt_emulate.cc.
type emuOp uint32

const (
	emuNTT emuOp = iota
	emuINTT
	emuCosetNTT
	emuCosetINTT
	emuQuotientH
	emuQuotientHLean // in two work vectors: quotient.go's lean order
)

func (o emuOp) String() string {
	return [...]string{"ntt", "intt", "coset-ntt", "coset-intt", "quotient", "quotient-lean"}[o]
}

// emulateNTT runs op on vecs (three for the quotients) with the kernels on
// the host, using the Go side's plans, scale factors and launch shapes, and
// returns the result vector.
func emulateNTT(t *testing.T, bin string, op emuOp, logN uint32, vecs ...[]fr.Element) []fr.Element {
	t.Helper()
	d := &domain{logN: logN, cpu: fft.NewDomain(uint64(1)<<logN, fft.WithoutPrecompute())}
	s := splitLog(logN)
	dif, dit := difPlan(logN), ditPlan(logN)
	hdr := []uint32{uint32(op), logN, s, uint32(len(dif)), uint32(len(dit))}
	for _, p := range append(dif, dit...) {
		hdr = append(hdr, p.lo, p.k, p.logG, p.sh, p.threads(), p.blocks(logN))
	}
	consts := []fr.Element{d.cpu.Generator}
	for kind := range numScaleKinds {
		base, mul := scaleParams(d.cpu, kind)
		var step fr.Element
		step.Exp(base, new(big.Int).SetUint64(uint64(1)<<s))
		consts = append(consts, base, step, mul)
	}
	consts = append(consts, cosetVanishingInverse(d))
	buf := append(driver.Bytes(hdr), driver.Bytes(consts)...)
	for _, v := range vecs {
		buf = append(buf, driver.Bytes(v)...)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	require.NoError(t, os.WriteFile(in, buf, 0o600))
	msg, err := exec.Command(bin, in, out).CombinedOutput()
	require.NoError(t, err, "emulator: %s", msg)
	res, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Len(t, res, len(vecs[0])*elemBytes)
	return append([]fr.Element(nil), unsafe.Slice((*fr.Element)(unsafe.Pointer(&res[0])), len(vecs[0]))...)
}

// TestNTTKernelsOnHost runs the NTT kernels' code on the CPU (see
// testdata/ntt_emulate.cc) and checks forward, inverse and coset transforms
// and the quotient pipeline, in three work vectors and in two, against
// gnark-crypto on fresh inputs: every size from 2^1 to 2^16 (one- and
// two-pass plans, every chunk shape), 2^18 (two passes of 9 bits) and 2^19
// (three passes).
func TestNTTKernelsOnHost(t *testing.T) {
	bin := buildHostKernels(t, "ntt_emulate")
	sizes := []uint32{}
	for l := uint32(1); l <= 16; l++ {
		sizes = append(sizes, l)
	}
	sizes = append(sizes, 18, 19)
	if testing.Short() {
		sizes = []uint32{1, 2, 3, 4, 7, 10, 11, 13, 16}
	}
	for _, logN := range sizes {
		for _, kind := range []inputKind{inputRandom, inputZero, inputConstant} {
			if kind != inputRandom && logN%5 != 1 {
				continue
			}
			t.Run(fmt.Sprintf("2^%d/%s", logN, kind), func(t *testing.T) {
				n := 1 << logN
				a := newVector(t, n, kind)
				ops := []emuOp{emuNTT, emuINTT, emuCosetNTT, emuCosetINTT, emuQuotientH, emuQuotientHLean}
				if logN > 16 {
					ops = []emuOp{emuNTT, emuQuotientH, emuQuotientHLean} // every pass kernel and direction, fewer runs
				}
				for _, op := range ops {
					var want, got []fr.Element
					switch op {
					case emuQuotientH, emuQuotientHLean:
						b, c := newVector(t, n, inputRandom), newVector(t, n, kind)
						want = refQuotientH(a, b, c)
						got = emulateNTT(t, bin, op, logN, a, b, c)
					default:
						inverse, coset := op == emuINTT || op == emuCosetINTT, op == emuCosetNTT || op == emuCosetINTT
						want = refNTT(a, coset)
						if inverse {
							want = refINTT(a, coset)
						}
						got = emulateNTT(t, bin, op, logN, a)
					}
					requireSameVector(t, want, got, op.String())
				}
			})
		}
	}
}
