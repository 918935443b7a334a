// Package smaps reads a process's memory mappings from /proc/<pid>/smaps:
// each mapping's address range, name and the sizes it lists (resident
// bytes, and the bytes huge pages back). The benchmarks use it to say
// where resident memory lies and what backs a buffer.
package smaps

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Mapping is one mapping: [Start, End), its name (the file mapped, or a
// pseudo-name such as "[heap]"; "" for an anonymous mapping) and its
// resident bytes, of which AnonHuge and FilePmd are huge pages (anonymous,
// and a file's mapped at the PMD level).
type Mapping struct {
	Start, End        uint64
	Name              string
	Rss               int64
	AnonHuge, FilePmd int64
}

// Self is the smaps of the calling process.
const Self = "/proc/self/smaps"

// Read reads the smaps file at path.
func Read(path string) ([]Mapping, error) {
	f, err := os.Open(filepath.Clean(path))
	if err != nil {
		return nil, err
	}
	defer f.Close() // read-only: Close has nothing to report
	ms, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ms, nil
}

// Parse reads smaps text: a header line ("start-end perms offset dev
// inode [name]") opens each mapping, and its "Rss:", "AnonHugePages:" and
// "FilePmdMapped:" lines ("N kB") give its sizes; other lines are skipped.
// A malformed header or size is an error naming the line.
func Parse(r io.Reader) ([]Mapping, error) {
	var ms []Mapping
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) >= 5 && !strings.HasSuffix(f[0], ":") && strings.Contains(f[0], "-") {
			lo, hi, ok := strings.Cut(f[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if !ok || err1 != nil || err2 != nil || end < start {
				return nil, fmt.Errorf("mapping line %q: not an address range", line)
			}
			ms = append(ms, Mapping{Start: start, End: end, Name: strings.Join(f[5:], " ")})
			continue
		}
		var size *int64
		if len(ms) > 0 {
			m := &ms[len(ms)-1]
			switch f[0] {
			case "Rss:":
				size = &m.Rss
			case "AnonHugePages:":
				size = &m.AnonHuge
			case "FilePmdMapped:":
				size = &m.FilePmd
			}
		}
		if size == nil {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(line, f[0])), " kB"), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s line %q: %w", strings.TrimSuffix(f[0], ":"), line, err)
		}
		*size += kb << 10
	}
	return ms, sc.Err()
}

// Holding returns the index of the mapping of ms that holds addr; false
// where none does.
func Holding(ms []Mapping, addr uint64) (int, bool) {
	i := slices.IndexFunc(ms, func(m Mapping) bool { return m.Start <= addr && addr < m.End })
	return i, i >= 0
}

// Run returns the indices [lo, hi] of the run of adjacent mappings around
// ms[i] (each ending where the next starts) that keep(m) accepts, ms in
// address order, as smaps lists them.
func Run(ms []Mapping, i int, keep func(Mapping) bool) (lo, hi int) {
	lo, hi = i, i
	for lo > 0 && ms[lo-1].End == ms[lo].Start && keep(ms[lo-1]) {
		lo--
	}
	for hi+1 < len(ms) && ms[hi].End == ms[hi+1].Start && keep(ms[hi+1]) {
		hi++
	}
	return lo, hi
}
