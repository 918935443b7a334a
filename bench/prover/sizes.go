package proverbench

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
)

// ParseSizes parses a comma-separated list of porep-synth targets, each
// written 2^k, k alone (an exponent: every valid target is at least 2^10)
// or a constraint count.
func ParseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		n, err := stats.ParseCount(f)
		if err != nil {
			return nil, fmt.Errorf("size %q: %w", f, err)
		}
		if !strings.HasPrefix(f, "2^") && n < 64 {
			n = 1 << n // a bare exponent
		}
		if n < porep.MinTarget || n > porep.MaxTarget {
			return nil, fmt.Errorf("size %q: want 2^10 … 2^27", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// SizeString writes n as 2^k when it is a power of two.
func SizeString(n int) string { return stats.FormatCount(n) }

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func writeJSON(w io.Writer, v any) error {
	if err := json.NewEncoder(w).Encode(v); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}
