// Package testseed gives tests that draw random inputs a seed they log and
// can replay: the clock's by default, so that every run tries new inputs,
// or the one named by CUZK_TEST_SEED, so that a failure seen once can be
// run again with the same inputs.
//
// Use it for every seed a test would otherwise take from the clock:
//
//	rng := rand.New(rand.NewPCG(testseed.Seed(t), 0))
//
// and rerun a failure with CUZK_TEST_SEED=<the logged seed> go test -run <its name>.
package testseed

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cuzk-dev/cuzk/internal/environ"
)

// Env names the variable that overrides the seed.
const Env = "CUZK_TEST_SEED"

var _ = environ.Register(Env, "the seed of the tests' random inputs (default: the clock's, logged by each test)")

// Seed returns the seed for tb's random inputs: the value of CUZK_TEST_SEED
// when it is set (a decimal or 0x-prefixed hexadecimal uint64), else one
// from the clock. It logs the seed with the command that replays it, and
// fails tb when CUZK_TEST_SEED cannot be read. Safe for concurrent use.
func Seed(tb testing.TB) uint64 {
	tb.Helper()
	seed, set, err := parse(os.Getenv(Env))
	if err != nil {
		tb.Fatalf("%s: %v", Env, err)
	}
	if !set {
		seed = uint64(time.Now().UnixNano())
	}
	tb.Logf("seed %d (rerun with %s=%d)", seed, Env, seed)
	return seed
}

// parse reads the variable's value; set is false when it is empty.
func parse(v string) (seed uint64, set bool, err error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false, nil
	}
	seed, err = strconv.ParseUint(v, 0, 64)
	if err != nil {
		return 0, false, err
	}
	return seed, true, nil
}
