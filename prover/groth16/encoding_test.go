package groth16_test

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

type codec interface {
	io.WriterTo
	io.ReaderFrom
}

// encodedObjects returns a fresh key pair and proof, their encodings, and
// empty values to decode into.
func encodedObjects(t testing.TB) map[string]struct {
	data  []byte
	fresh func() codec
} {
	c := &r1cstest.MulChain{N: 12, Seed: fr.NewElement(4)}
	f := setup(t, c)
	proof, _ := prove(t, f, c, rand.Reader)
	out := map[string]struct {
		data  []byte
		fresh func() codec
	}{}
	for name, obj := range map[string]codec{"proof": proof, "vk": f.vk, "pk": f.pk} {
		var buf bytes.Buffer
		n, err := obj.WriteTo(&buf)
		require.NoError(t, err)
		require.EqualValues(t, buf.Len(), n)
		fresh := map[string]func() codec{
			"proof": func() codec { return &groth16.Proof{} },
			"vk":    func() codec { return &groth16.VerifyingKey{} },
			"pk":    func() codec { return &groth16.ProvingKey{} },
		}[name]
		out[name] = struct {
			data  []byte
			fresh func() codec
		}{buf.Bytes(), fresh}
	}
	return out
}

func TestEncodingRoundTrip(t *testing.T) {
	for name, o := range encodedObjects(t) {
		t.Run(name, func(t *testing.T) {
			obj := o.fresh()
			n, err := obj.ReadFrom(bytes.NewReader(o.data))
			require.NoError(t, err)
			assert.EqualValues(t, len(o.data), n)
			var again bytes.Buffer
			_, err = obj.WriteTo(&again)
			require.NoError(t, err)
			assert.Equal(t, o.data, again.Bytes())
		})
	}
}

func TestEncodedProofVerifies(t *testing.T) {
	c := r1cstest.NewCubic(5)
	f := setup(t, c)
	proof, pub := prove(t, f, c, rand.Reader)
	var pbuf, vbuf bytes.Buffer
	_, err := proof.WriteTo(&pbuf)
	require.NoError(t, err)
	assert.Equal(t, 232, pbuf.Len())
	_, err = f.vk.WriteTo(&vbuf)
	require.NoError(t, err)
	var p2 groth16.Proof
	var vk2 groth16.VerifyingKey
	_, err = p2.ReadFrom(&pbuf)
	require.NoError(t, err)
	_, err = vk2.ReadFrom(&vbuf)
	require.NoError(t, err)
	require.NoError(t, groth16.Verify(&vk2, &p2, pub))
}

func TestDecodeRejectsDamage(t *testing.T) {
	for name, o := range encodedObjects(t) {
		t.Run(name, func(t *testing.T) {
			damaged := func(mut func(b []byte) []byte) error {
				b := mut(append([]byte(nil), o.data...))
				_, err := o.fresh().ReadFrom(bytes.NewReader(b))
				return err
			}
			assert.ErrorIs(t, damaged(func(b []byte) []byte { b[0] ^= 1; return b }), groth16.ErrFormat)
			assert.ErrorIs(t, damaged(func(b []byte) []byte { b[5] = 9; return b }), groth16.ErrVersion)
			assert.ErrorIs(t, damaged(func(b []byte) []byte { b[7] = 0x77; return b }), groth16.ErrCurve)
			assert.ErrorIs(t, damaged(func(b []byte) []byte { b[len(b)-1] ^= 0x80; return b }), groth16.ErrChecksum)
			assert.ErrorIs(t, damaged(func(b []byte) []byte { return b[:len(b)-1] }), io.ErrUnexpectedEOF)
			assert.ErrorIs(t, damaged(func(b []byte) []byte { return b[:5] }), io.ErrUnexpectedEOF)
			assert.Error(t, damaged(func(b []byte) []byte { return nil }))
			// Flipping any body byte must fail (bad point, bad length or checksum).
			for i := 8; i < len(o.data)-32; i += max(1, len(o.data)/97) {
				assert.Error(t, damaged(func(b []byte) []byte { b[i] ^= 0x20; return b }), "byte %d", i)
			}
		})
	}
}

func TestDecodeWrongKind(t *testing.T) {
	objs := encodedObjects(t)
	_, err := (&groth16.Proof{}).ReadFrom(bytes.NewReader(objs["vk"].data))
	assert.ErrorIs(t, err, groth16.ErrFormat)
	_, err = (&groth16.VerifyingKey{}).ReadFrom(bytes.NewReader(objs["pk"].data))
	assert.ErrorIs(t, err, groth16.ErrFormat)
}

func fuzzDecode(f *testing.F, name string) {
	for _, o := range encodedObjects(f) {
		f.Add(o.data)
	}
	f.Add([]byte("CZKP"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var obj codec
		switch name {
		case "proof":
			obj = &groth16.Proof{}
		case "vk":
			obj = &groth16.VerifyingKey{}
		default:
			obj = &groth16.ProvingKey{}
		}
		if _, err := obj.ReadFrom(bytes.NewReader(data)); err != nil {
			return
		}
		var out bytes.Buffer
		_, err := obj.WriteTo(&out)
		require.NoError(t, err)
		require.Equal(t, data[:out.Len()], out.Bytes(), "decoded objects re-encode identically")
	})
}

func FuzzDecodeProof(f *testing.F)        { fuzzDecode(f, "proof") }
func FuzzDecodeVerifyingKey(f *testing.F) { fuzzDecode(f, "vk") }
func FuzzDecodeProvingKey(f *testing.F)   { fuzzDecode(f, "pk") }

func BenchmarkDecodeProvingKey(b *testing.B) {
	for _, logN := range []int{12} {
		b.Run(fmt.Sprintf("2^%d", logN), func(b *testing.B) {
			f := setup(b, &r1cstest.MulChain{N: 1<<logN - 4, Seed: fr.NewElement(3)})
			var buf bytes.Buffer
			_, err := f.pk.WriteTo(&buf)
			require.NoError(b, err)
			data := buf.Bytes()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var pk groth16.ProvingKey
				if _, err := pk.ReadFrom(bytes.NewReader(data)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/key")
		})
	}
}

// offSubgroupG1 returns a point on the curve outside the prime-order
// subgroup (the cofactor of BLS12-381's G1 makes most curve points so).
func offSubgroupG1(t *testing.T) bls12381.G1Affine {
	var x, rhs, four fp.Element
	four.SetUint64(4)
	for i := uint64(1); i < 1000; i++ {
		x.SetUint64(i)
		rhs.Square(&x).Mul(&rhs, &x).Add(&rhs, &four)
		var y fp.Element
		if y.Sqrt(&rhs) == nil {
			continue
		}
		p := bls12381.G1Affine{X: x, Y: y}
		if p.IsOnCurve() && !p.IsInSubGroup() {
			return p
		}
	}
	t.Fatal("no off-subgroup point found")
	return bls12381.G1Affine{}
}

func TestDecodeSubgroupChecks(t *testing.T) {
	c := r1cstest.NewCubic(3)
	f := setup(t, c)
	bad := offSubgroupG1(t)

	vk := *f.vk
	vk.G1.IC = append([]bls12381.G1Affine{bad}, vk.G1.IC[1:]...)
	var buf bytes.Buffer
	_, err := vk.WriteTo(&buf)
	require.NoError(t, err)
	_, err = (&groth16.VerifyingKey{}).ReadFrom(&buf)
	assert.ErrorIs(t, err, groth16.ErrCorrupt, "verifying keys are subgroup-checked")

	proof, pub := prove(t, f, c, rand.Reader)
	proof.C = bad
	assert.ErrorIs(t, groth16.Verify(f.vk, proof, pub), groth16.ErrInvalidProof)
	buf.Reset()
	_, err = proof.WriteTo(&buf)
	require.NoError(t, err)
	_, err = (&groth16.Proof{}).ReadFrom(&buf)
	assert.ErrorIs(t, err, groth16.ErrCorrupt, "proofs are subgroup-checked")
}
