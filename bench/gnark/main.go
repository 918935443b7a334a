// Command gnark-bench proves one circuit exported by cuzk's prover
// benchmark (bench/prover) with gnark v0.14's Groth16 on the CPU and prints
// its times as one JSON object on stdout.
//
// It lives in its own module so that gnark never enters cuzk's dependency
// graph; the parent benchmark builds and runs it as a child process, with the
// same GOMAXPROCS as its own measurement.
//
// The circuit is the same R1CS as cuzk proves, row for row and term for
// term (see classify in system.go for which wires gnark's solver computes
// and which it is given), so both provers do the same quotient (NTTs of
// the same domain) and MSMs of the same sizes over the same scalars.
//
// Usage:
//
//	gnark-bench -in circuit.czr1 [-keys dir] [-runs 3]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/logger"
	"github.com/rs/zerolog"
)

// gnarkVersion is the gnark release this module requires (go.mod).
const gnarkVersion = "v0.14.0"

// Report is what one invocation prints. Durations are in nanoseconds.
// Solve and Prove are gnark's own split of each timed groth16.Prove call
// (from its debug log: "constraint system solver done", "prover done");
// Total is the whole call as timed here.
type Report struct {
	Gnark         string          `json:"gnark"`
	GOMAXPROCS    int             `json:"gomaxprocs"`
	NumCPU        int             `json:"numcpu"`
	Constraints   int             `json:"constraints"`
	Public        int             `json:"public"`
	Secret        int             `json:"secret"`
	Internal      int             `json:"internal"`
	SetupCached   bool            `json:"setup_cached"`
	Setup         time.Duration   `json:"setup_ns"`
	KeyLoad       time.Duration   `json:"key_load_ns"`
	Solve         []time.Duration `json:"solve_ns"`
	Prove         []time.Duration `json:"prove_ns"`
	Total         []time.Duration `json:"total_ns"`
	Verified      int             `json:"verified"`
	Proofs        int             `json:"proofs"`
	KeyCacheError string          `json:"key_cache_error,omitempty"`
}

func main() {
	in := flag.String("in", "", "circuit exported by bench/prover (required)")
	keys := flag.String("keys", "", "directory caching gnark's keys per circuit shape (\"\": no cache)")
	runs := flag.Int("runs", 3, "timed proofs, after one warm-up proof")
	flag.Parse()
	if *in == "" || *runs < 1 {
		fmt.Fprintln(os.Stderr, "gnark-bench: -in is required and -runs must be at least 1")
		flag.Usage()
		os.Exit(2)
	}
	rep, err := run(*in, *keys, *runs)
	if err != nil {
		fmt.Fprintf(os.Stderr, "gnark-bench: %v\n", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		fmt.Fprintf(os.Stderr, "gnark-bench: write report: %v\n", err)
		os.Exit(1)
	}
}

func run(in, keyDir string, runs int) (*Report, error) {
	f, err := os.Open(in)
	if err != nil {
		return nil, err
	}
	e, err := readExported(f)
	f.Close() // read-only: Close has nothing to report
	if err != nil {
		return nil, fmt.Errorf("%s: %w", in, err)
	}
	sys, err := build(e)
	if err != nil {
		return nil, err
	}
	rep := &Report{
		Gnark: gnarkVersion, GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
		Constraints: sys.ccs.GetNbConstraints(), Public: sys.ccs.GetNbPublicVariables(),
		Secret: sys.ccs.GetNbSecretVariables(), Internal: sys.ccs.GetNbInternalVariables(),
	}
	pk, vk, err := keysFor(sys, e.shapeID, keyDir, rep)
	if err != nil {
		return nil, err
	}
	e = nil // the matrices and values now live in sys; let them go
	return rep, proveRuns(sys, pk, vk, runs, rep)
}

// proveRuns proves runs+1 times (the first is a warm-up) and verifies each
// proof; a proof that does not verify fails the run.
func proveRuns(sys *system, pk groth16.ProvingKey, vk groth16.VerifyingKey, runs int, rep *Report) error {
	var log bytes.Buffer
	zerolog.DurationFieldUnit, zerolog.DurationFieldInteger = time.Nanosecond, true
	logger.Set(zerolog.New(&log).Level(zerolog.DebugLevel))
	defer logger.Disable()
	for i := 0; i <= runs; i++ {
		log.Reset()
		start := time.Now()
		proof, err := groth16.Prove(sys.ccs, pk, sys.full)
		total := time.Since(start)
		if err != nil {
			return fmt.Errorf("prove %d: %w", i, err)
		}
		solve, prove, err := splitLog(&log)
		if err != nil {
			return fmt.Errorf("prove %d: %w", i, err)
		}
		rep.Proofs++
		if err := groth16.Verify(proof, vk, sys.public); err != nil {
			return fmt.Errorf("verify proof %d: %w", i, err)
		}
		rep.Verified++
		if i > 0 {
			rep.Solve, rep.Prove, rep.Total = append(rep.Solve, solve), append(rep.Prove, prove), append(rep.Total, total)
		}
	}
	return nil
}

// splitLog reads the solver's and the prover's durations from gnark's
// debug log of one Prove call.
func splitLog(r io.Reader) (solve, prove time.Duration, err error) {
	dec := json.NewDecoder(r)
	for {
		var ev struct {
			Message string `json:"message"`
			Took    int64  `json:"took"`
		}
		if err := dec.Decode(&ev); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return 0, 0, fmt.Errorf("gnark log: %w", err)
		}
		switch ev.Message {
		case "constraint system solver done":
			solve = time.Duration(ev.Took)
		case "prover done":
			prove = time.Duration(ev.Took)
		}
	}
	if solve == 0 || prove == 0 {
		return 0, 0, errors.New("gnark log: no solver or prover duration (log format changed?)")
	}
	return solve, prove, nil
}
