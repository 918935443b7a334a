package cpu

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// Backend computes quotients and MSMs on the CPU. It is safe for concurrent
// use; fft domains (with their twiddle tables) are built once per size and
// kept for the Backend's lifetime.
type Backend struct {
	nbTasks int
	mu      sync.Mutex
	domains map[uint64]*fft.Domain
}

// Option configures a Backend.
type Option func(*Backend) error

// WithNbTasks bounds the goroutines one MSM or NTT uses (default: all CPUs).
func WithNbTasks(n int) Option {
	return func(b *Backend) error {
		if n < 1 || n > 1024 {
			return fmt.Errorf("cpu: nbTasks %d out of range [1, 1024]", n)
		}
		b.nbTasks = n
		return nil
	}
}

// New returns a Backend configured by opts.
func New(opts ...Option) (*Backend, error) {
	b := &Backend{nbTasks: runtime.NumCPU(), domains: make(map[uint64]*fft.Domain)}
	for _, o := range opts {
		if err := o(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// ErrSize reports input lengths the backend cannot process.
var ErrSize = errors.New("cpu: bad input size")

// Domain returns the cached evaluation domain of size n (a power of two).
// Its generator is fft.Generator(n), the one groth16.Setup uses.
func (b *Backend) Domain(n uint64) *fft.Domain {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.domains[n]
	if !ok {
		d = fft.NewDomain(n)
		b.domains[n] = d
	}
	return d
}

// QuotientH implements groth16.Backend. It interpolates a, b, c (inverse NTT),
// evaluates them on the coset gH (g = the multiplicative generator of fr),
// where Z(x) = g^n·1 − 1 is a nonzero constant, divides pointwise and
// interpolates back from the coset. a, b and c are overwritten; the result
// reuses a's storage. It checks ctx between its transforms.
func (b *Backend) QuotientH(ctx context.Context, a, bv, c []fr.Element) ([]fr.Element, error) {
	n := len(a)
	if n < 2 || bits.OnesCount(uint(n)) != 1 || len(bv) != n || len(c) != n {
		return nil, fmt.Errorf("quotient: lengths %d, %d, %d: %w (want equal powers of two ≥ 2)", n, len(bv), len(c), ErrSize)
	}
	if err := stop(ctx, "quotient"); err != nil {
		return nil, err
	}
	d := b.Domain(uint64(n))
	if err := b.toCoset(ctx, d, a, bv, c); err != nil {
		return nil, err
	}
	// Z on the coset: (g·ω^i)^n − 1 = g^n − 1 for every i.
	var zInv fr.Element
	zInv.Exp(d.FrMultiplicativeGen, bigUint(uint64(n)))
	one := fr.One()
	zInv.Sub(&zInv, &one).Inverse(&zInv)
	parallel(n, b.nbTasks, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a[i].Mul(&a[i], &bv[i]).Sub(&a[i], &c[i]).Mul(&a[i], &zInv)
		}
	})
	if err := stop(ctx, "quotient: interpolation from the coset"); err != nil {
		return nil, err
	}
	d.FFTInverse(a, fft.DIF, fft.OnCoset(), fft.WithNbTasks(b.nbTasks))
	fft.BitReverse(a)
	return a, nil
}

// toCoset replaces each of vs, evaluations over d, by its evaluations over
// d's coset (an inverse NTT, then a coset NTT), the three at once; each
// checks ctx between its two transforms.
func (b *Backend) toCoset(ctx context.Context, d *fft.Domain, vs ...[]fr.Element) error {
	tasks := fft.WithNbTasks(max(1, b.nbTasks/len(vs)))
	errs := make([]error, len(vs))
	var wg sync.WaitGroup
	for i, v := range vs {
		wg.Go(func() {
			d.FFTInverse(v, fft.DIF, tasks)
			if errs[i] = stop(ctx, "quotient: coset evaluation"); errs[i] == nil {
				d.FFT(v, fft.DIT, fft.OnCoset(), tasks)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return stop(ctx, "quotient: division by Z")
}

// stop returns an error wrapping ctx.Err(), naming the step about to start,
// when ctx is done.
func stop(ctx context.Context, step string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s: %w", step, err)
	}
	return nil
}

// MSMG1 implements groth16.Backend with gnark-crypto's MultiExp. One
// MultiExp cannot be interrupted: ctx is checked before it starts.
func (b *Backend) MSMG1(ctx context.Context, bases []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	var p bls12381.G1Jac
	if len(bases) != len(scalars) {
		return p, fmt.Errorf("msm g1: %d bases, %d scalars: %w", len(bases), len(scalars), ErrSize)
	}
	if err := stop(ctx, "msm g1"); err != nil {
		return p, err
	}
	if len(bases) == 0 {
		p.X.SetOne() // the empty sum: the point at infinity (1:1:0)
		p.Y.SetOne()
		return p, nil
	}
	if _, err := p.MultiExp(bases, scalars, ecc.MultiExpConfig{NbTasks: b.g1Tasks()}); err != nil {
		return p, fmt.Errorf("msm g1: %w", err)
	}
	return p, nil
}

// MSMG2 implements groth16.Backend with gnark-crypto's MultiExp; see MSMG1.
func (b *Backend) MSMG2(ctx context.Context, bases []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	var p bls12381.G2Jac
	if len(bases) != len(scalars) {
		return p, fmt.Errorf("msm g2: %d bases, %d scalars: %w", len(bases), len(scalars), ErrSize)
	}
	if err := stop(ctx, "msm g2"); err != nil {
		return p, err
	}
	if len(bases) == 0 {
		p.X.SetOne() // the empty sum: the point at infinity (1:1:0)
		p.Y.SetOne()
		return p, nil
	}
	if _, err := p.MultiExp(bases, scalars, ecc.MultiExpConfig{NbTasks: b.g2Tasks()}); err != nil {
		return p, fmt.Errorf("msm g2: %w", err)
	}
	return p, nil
}

// g1Tasks and g2Tasks size the MSMs for groth16.Prove, which runs the three
// G1 MSMs at once and then the G2 MSM alone. Every G1 MSM may use all cores,
// so the one that finishes last (often the one over L‖H, twice the others'
// length) is not left on part of the machine. Measured at 2^14 constraints
// on 2 cores: 0.43–0.50 s per proof, against 0.51–0.56 s with half the cores
// per G1 MSM (gnark's split), and at 2^16 1.14–1.20 s against 1.43–1.60 s
// (docs/perf.md, "Prover (CPU)"). The G2 MSM, about three times
// as costly per point, gets twice the cores on small machines, as in gnark
// v0.14's prover (backend/groth16/bls12-381/prove.go).
func (b *Backend) g1Tasks() int { return b.nbTasks }

func (b *Backend) g2Tasks() int {
	if b.nbTasks <= 16 {
		return 2 * b.nbTasks
	}
	return b.nbTasks
}

// parallel runs f over [0, n) split into at most tasks contiguous chunks.
func parallel(n, tasks int, f func(lo, hi int)) {
	chunk := (n + tasks - 1) / tasks
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			f(lo, hi)
		}(lo, min(lo+chunk, n))
	}
	wg.Wait()
}

func bigUint(v uint64) *big.Int { return new(big.Int).SetUint64(v) }
