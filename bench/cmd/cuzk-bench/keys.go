package main

import (
	"fmt"
	"io"

	"github.com/cuzk-dev/cuzk/bench/gpubench"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// printKeyInfo says where the keys came from and what that cost.
func printKeyInfo(w io.Writer, info gpubench.KeyInfo, pk *groth16.ProvingKey) {
	points := len(pk.G1.A) + len(pk.G1.B) + len(pk.G1.L) + len(pk.G1.H)
	if info.Cached {
		fmt.Fprintf(w, "keys: loaded %s (%s, %d G1 + %d G2 points) in %s\n",
			info.PKPath, stats.FormatBytes(info.PKSize), points, len(pk.G2.B), stats.MsSig(info.Load))
		return
	}
	if info.Replaced != "" {
		fmt.Fprintf(w, "keys: cached key not used (%s); replacing it\n", info.Replaced)
	}
	fmt.Fprintf(w, "keys: development setup (NOT for production): compile %s, setup %s (%d G1 + %d G2 points)\n",
		stats.MsSig(info.Compile), stats.MsSig(info.Setup), points, len(pk.G2.B))
	if info.PKPath != "" {
		fmt.Fprintf(w, "keys: stored %s (%s) in %s; the next run loads it\n", info.PKPath, stats.FormatBytes(info.PKSize), stats.MsSig(info.Store))
	}
}
