package engine

import (
	"context"
	"fmt"

	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// Need is what a request will need of host memory, known before any
// compile, setup, load or synthesis (keys.Shape).
type Need struct {
	Key     int64 // the proving key's host size
	Compile int64 // a compile of the circuit (for a development key's setup)
	Setup   int64 // a development setup's scalars beside the compile; 0 for a production key file
	Vectors int64 // one partition's synthesis vectors; 0 for a key request
}

// Peak is the most the request holds at once: the key beside its compile
// and a development setup's scalars (while it loads) or beside one
// partition's vectors (while it proves).
func (n Need) Peak() int64 { return n.Key + max(n.Compile+n.Setup, n.Vectors) }

// Admit computes what a request of circuit c needs (partitions 0: a key
// request — GetVerifyingKey, PreloadKey — which synthesizes nothing) and
// refuses it, before any work, when it can never fit: its key above the
// host key budget (keys.ErrTooLarge), one partition's vectors above the
// job budget, or its peak above HostTotal (both ErrNeverFits, naming the
// budget and the amounts). A request that fits waits for room later, in
// the key manager and in the job budget. ctx bounds the wait for the
// shape's counting pass (a tenth of a compile, the first time a shape is
// seen).
func (e *Engine) Admit(ctx context.Context, c *registry.Resolved, partitions int) (Need, error) {
	sh, err := e.cfg.Keys.Shape(ctx, c)
	if err != nil {
		return Need{}, err
	}
	n := Need{Key: sh.KeyBytes(), Compile: sh.CompileBytes()}
	if e.cfg.Keys.Development(c) {
		n.Setup = sh.SetupBytes()
	}
	if err := e.cfg.Keys.Fits(sh.Sys); err != nil {
		return n, fmt.Errorf("key of %s: %w", c.Key, err)
	}
	if partitions > 0 {
		n.Vectors = sh.VectorBytes()
		what := "its synthesis"
		if partitions > 1 {
			what = "each partition's synthesis"
		}
		if err := e.neverFits(what+" of "+c.Key, n.Vectors); err != nil {
			return n, err
		}
	}
	if t := e.cfg.HostTotal; t > 0 && n.Peak() > t {
		return n, fmt.Errorf("%s needs %d bytes of host memory at its peak (key %d, compile %d, development setup %d, vectors %d), the host budget is %d: %w",
			c.Key, n.Peak(), n.Key, n.Compile, n.Setup, n.Vectors, t, ErrNeverFits)
	}
	return n, nil
}
