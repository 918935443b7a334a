package groth16

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// instantBackend answers every call at once with fixed values, so a
// benchmark over it times only Prove's own work: assembling the scalar
// vectors, the goroutines, the final group operations. On a GPU backend that
// work is a visible share of a proof (23 ms of 120 at 2^20 on the H200 host,
// docs/perf.md).
type instantBackend struct{ h []fr.Element }

func (b *instantBackend) QuotientH(ctx context.Context, a, _, _ []fr.Element) ([]fr.Element, error) {
	return b.h, nil
}

func (b *instantBackend) MSMG1(context.Context, []bls12381.G1Affine, []fr.Element) (bls12381.G1Jac, error) {
	_, _, g, _ := bls12381.Generators()
	var j bls12381.G1Jac
	j.FromAffine(&g)
	return j, nil
}

func (b *instantBackend) MSMG2(context.Context, []bls12381.G2Affine, []fr.Element) (bls12381.G2Jac, error) {
	_, _, _, g := bls12381.Generators()
	var j bls12381.G2Jac
	j.FromAffine(&g)
	return j, nil
}

// shapedKey returns a key of porep-synth's shape at 2^logN (public and
// private counts of the 2^20 instance scaled, a few A columns and 43 % of
// the B columns at infinity, as the instance was before its labels gained
// parents) whose points are never read.
func shapedKey(logN int, rng *rand.Rand) *ProvingKey {
	n := 1 << logN
	pub, priv := 246, n+n/128-246
	nv := pub + priv
	pk := &ProvingKey{DomainSize: n, NbPublic: pub, NbPrivate: priv}
	pk.InfinityA, pk.InfinityB = make([]bool, nv), make([]bool, nv)
	na, nb := nv, nv
	for i := range nv {
		if rng.IntN(64) == 0 {
			pk.InfinityA[i], na = true, na-1
		}
		if rng.IntN(100) < 43 {
			pk.InfinityB[i], nb = true, nb-1
		}
	}
	pk.G1.A, pk.G1.B = make([]bls12381.G1Affine, na), make([]bls12381.G1Affine, nb)
	pk.G2.B = make([]bls12381.G2Affine, nb)
	pk.setLH(make([]bls12381.G1Affine, priv+n-1))
	return pk
}

// BenchmarkProveHostWork times Prove on an instant backend: what Prove adds
// to the backend's time, with fresh host scratch per proof ("fresh") and
// with one Workspace carried from proof to proof ("workspace").
func BenchmarkProveHostWork(b *testing.B) {
	for _, logN := range []int{16, 20} {
		rng := rand.New(rand.NewPCG(1, 2))
		pk := shapedKey(logN, rng)
		vec := func(k int) []fr.Element {
			v := make([]fr.Element, k)
			for i := range v {
				v[i].SetUint64(rng.Uint64())
			}
			return v
		}
		n := pk.DomainSize
		asg := &r1cs.Assignment{Public: vec(pk.NbPublic), Private: vec(pk.NbPrivate), A: vec(n), B: vec(n), C: vec(n)}
		be := &instantBackend{h: vec(n)}
		for _, scratch := range []string{"fresh", "workspace"} {
			b.Run(fmt.Sprintf("2^%d/%s", logN, scratch), func(b *testing.B) {
				var opts []ProveOption
				if scratch == "workspace" {
					opts = append(opts, WithWorkspace(&Workspace{}))
				}
				rnd := rand.NewChaCha8([32]byte{})
				b.ResetTimer()
				for range b.N {
					if _, err := Prove(context.Background(), pk, asg, be, rnd, opts...); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
