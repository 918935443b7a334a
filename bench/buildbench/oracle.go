package buildbench

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// stateKeys returns, per unit, a hash of everything its compile reads: the
// command line and the path and bytes of every project file nvcc listed.
// It relies on neither builder's notion of freshness: the dependency lists
// come from nvcc itself (through ninja's log), the bytes from the disk.
func stateKeys(root string, cmds map[string]string, deps map[string][]string) (map[string]string, error) {
	sums := map[string]string{}
	keys := map[string]string{}
	for name, cmd := range cmds {
		h := sha256.New()
		fmt.Fprintf(h, "cmd %s\n", cmd)
		for _, d := range deps[name] {
			sum, ok := sums[d]
			if !ok {
				b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(d)))
				if err != nil {
					return nil, fmt.Errorf("hash %s input %s: %w", name, d, err)
				}
				s := sha256.Sum256(b)
				sum = hex.EncodeToString(s[:])
				sums[d] = sum
			}
			fmt.Fprintf(h, "input %s %s\n", d, sum)
		}
		keys[name] = hex.EncodeToString(h.Sum(nil))
	}
	return keys, nil
}

// oracle remembers every state each unit has been built in.
type oracle struct {
	seen map[string]map[string]bool
	last map[string]string
}

func newOracle() *oracle {
	return &oracle{seen: map[string]map[string]bool{}, last: map[string]string{}}
}

// observe records the units' current states and returns how many differ
// from the previous step's (what a perfect timestamp tool would rebuild)
// and how many were never built before (the minimum any builder needs).
func (o *oracle) observe(keys map[string]string) (changed, minimum int) {
	for name, k := range keys {
		if o.last[name] != k {
			changed++
		}
		if o.seen[name] == nil {
			o.seen[name] = map[string]bool{}
		}
		if !o.seen[name][k] {
			minimum++
			o.seen[name][k] = true
		}
		o.last[name] = k
	}
	return changed, minimum
}

// Picks are the files the sequence edits, chosen from the real dependency
// graph so that the edits hit cheap units.
type Picks struct {
	Header       string   // edited then reverted (steps 3-4): shared by ≥3 units
	HeaderUnits  []string // the units that include it
	SwitchHeader string   // edited on branch B: another header shared by ≥2 units
	SwitchSource string   // the kernel source edited on branch B
}

// choose picks, by the cold build's compile time per unit: the cheapest
// header shared by ≥3 units; another header shared by ≥2 units; and the
// cheapest kernel source outside that header's dependents (or the cheapest
// overall when none is outside). Ties go to the smaller name.
func choose(deps map[string][]string, sources map[string]string, cost map[string]time.Duration) (Picks, error) {
	isSource := map[string]bool{}
	for _, s := range sources {
		isSource[s] = true
	}
	users := map[string][]string{}
	for name, ds := range deps {
		for _, d := range ds {
			if !isSource[d] {
				users[d] = append(users[d], name)
			}
		}
	}
	var p Picks
	var ok bool
	if p.Header, ok = cheapest(users, cost, 3, ""); !ok {
		return p, fmt.Errorf("pick files: no header is shared by 3 units")
	}
	p.HeaderUnits = sorted(users[p.Header])
	if p.SwitchHeader, ok = cheapest(users, cost, 2, p.Header); !ok {
		return p, fmt.Errorf("pick files: no second header is shared by 2 units")
	}
	outside := map[string][]string{}
	for name, src := range sources {
		if !contains(users[p.SwitchHeader], name) {
			outside[src] = []string{name}
		}
	}
	if len(outside) == 0 {
		for name, src := range sources {
			outside[src] = []string{name}
		}
	}
	p.SwitchSource, _ = cheapest(outside, cost, 1, "")
	return p, nil
}

// cheapest returns the file with at least min users whose users cost the
// least in total, skipping skip.
func cheapest(users map[string][]string, cost map[string]time.Duration, min int, skip string) (string, bool) {
	files := make([]string, 0, len(users))
	for f := range users {
		files = append(files, f)
	}
	sort.Strings(files)
	best, bestCost := "", time.Duration(-1)
	for _, f := range files {
		if f == skip || len(users[f]) < min {
			continue
		}
		var c time.Duration
		for _, u := range users[f] {
			c += cost[u]
		}
		if bestCost < 0 || c < bestCost {
			best, bestCost = f, c
		}
	}
	return best, best != ""
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func joinNames(s []string) string { return strings.Join(sorted(s), ",") }
