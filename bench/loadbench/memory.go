package loadbench

import (
	"bufio"
	"bytes"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"

	"github.com/cuzk-dev/cuzk/internal/hostmem"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

// hostMemory is where this process's resident memory lies at one moment:
// the resident bytes of each mapping kind (from /proc/self/smaps), and,
// inside the anonymous part, what the engine's out-of-heap vectors and the
// Go runtime account for. It explains a peak RSS: pinned vectors, the Go
// heap and its collector's slack, a mapped key file, the CUDA driver's
// own mappings.
type hostMemory struct {
	RSS      int64            // the sum of every mapping's resident bytes
	Mappings map[string]int64 // resident bytes by mapping: "anonymous", "[heap]", "[stack]", or the file mapped
	Vectors  int64            // solved vectors mapped outside the Go heap (internal/hostmem)
	// The Go runtime's memory (runtime/metrics): live and not yet swept
	// objects, heap kept but free (the collector's slack, not returned to
	// the system), and the rest it maps (stacks, metadata), all resident
	// as far as the runtime knows.
	GoObjects, GoFree, GoOther int64
	// GoLive is the heap the last collection found live: what GoObjects
	// holds beyond it is garbage not yet collected (or allocated since).
	GoLive          int64
	GoGoal, GoLimit int64 // the heap goal and the memory limit
	GoGC            int64 // GOGC, as the runtime holds it (-1: off)
	// KeyReleased is the part of GoObjects not resident: the key's points
	// the key manager gave back to the system once the GPU held them
	// (release_host_keys), which stay live objects to the runtime.
	KeyReleased int64
}

// anonymous is the name of the mappings without a file.
const anonymous = "anonymous"

// readHostMemory reads the breakdown now; an error where /proc/self/smaps
// cannot be read (not Linux).
func readHostMemory() (hostMemory, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return hostMemory{}, err
	}
	defer f.Close() // read-only: Close has nothing to report
	hm, err := parseSmaps(f)
	if err != nil {
		return hostMemory{}, fmt.Errorf("/proc/self/smaps: %w", err)
	}
	hm.Vectors = hostmem.Mapped()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"}, {Name: "/gc/heap/goal:bytes"}, {Name: "/gc/gomemlimit:bytes"},
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	v := func(i int) int64 { return int64(s[i].Value.Uint64()) }
	hm.GoObjects, hm.GoFree = v(0), v(1)+v(2)
	hm.GoOther = v(3) - v(4) - hm.GoObjects - hm.GoFree
	hm.GoGoal, hm.GoLimit, hm.GoLive, hm.GoGC = v(5), v(6), v(7), v(8)
	return hm, nil
}

// parseSmaps sums the Rss lines of smaps by mapping: a header line
// ("start-end perms offset dev inode [path]") opens a mapping, whose path,
// if any, names it.
func parseSmaps(r io.Reader) (hostMemory, error) {
	hm := hostMemory{Mappings: map[string]int64{}}
	name := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if rest, ok := bytes.CutPrefix(line, []byte("Rss:")); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(rest)), " kB"), 10, 64)
			if err != nil {
				return hm, fmt.Errorf("Rss line %q: %w", line, err)
			}
			hm.Mappings[name] += kb << 10
			hm.RSS += kb << 10
			continue
		}
		if f := strings.Fields(string(line)); len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			name = anonymous
			if len(f) >= 6 {
				name = strings.Join(f[5:], " ")
			}
		}
	}
	return hm, sc.Err()
}

// write prints the breakdown in two lines: the largest mappings, and the
// anonymous part split among the vectors, the Go runtime and the rest
// (the CUDA driver's and C allocations among it).
func (hm hostMemory) write(w io.Writer, indent string) {
	type m struct {
		name  string
		bytes int64
	}
	var ms []m
	for k, v := range hm.Mappings {
		if v > 0 {
			ms = append(ms, m{k, v})
		}
	}
	slices.SortFunc(ms, func(a, b m) int { return cmp.Or(cmp.Compare(b.bytes, a.bytes), strings.Compare(a.name, b.name)) })
	var parts []string
	for i, x := range ms {
		if i == 5 {
			var rest int64
			for _, y := range ms[i:] {
				rest += y.bytes
			}
			parts = append(parts, fmt.Sprintf("%d more %s", len(ms)-i, stats.FormatGiB(rest)))
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s", x.name, stats.FormatGiB(x.bytes)))
	}
	g := stats.FormatGiB
	limit := g(hm.GoLimit)
	if hm.GoLimit >= math.MaxInt64/2 {
		limit = "none"
	}
	anon := hm.Mappings[anonymous] + hm.Mappings["[heap]"]
	fmt.Fprintf(w, "%sresident %s by mapping: %s\n", indent, g(hm.RSS), strings.Join(parts, ", "))
	objects := fmt.Sprintf("%s (live at the last collection %s)", g(hm.GoObjects), g(hm.GoLive))
	if hm.KeyReleased > 0 {
		objects = fmt.Sprintf("%s (live at the last collection %s; %s resident: %s of them the key's points given back to the system)",
			g(hm.GoObjects), g(hm.GoLive), g(hm.GoObjects-hm.KeyReleased), g(hm.KeyReleased))
	}
	gogc := strconv.FormatInt(hm.GoGC, 10)
	if hm.GoGC < 0 {
		gogc = "off"
	}
	fmt.Fprintf(w, "%sanonymous %s: solved vectors (out of heap) %s, Go heap objects %s, Go heap free (not returned) %s, Go runtime other %s, the rest (CUDA driver, C) %s; Go heap goal %s (GOGC %s), memory limit %s\n",
		indent, g(anon), g(hm.Vectors), objects, g(hm.GoFree), g(hm.GoOther),
		g(anon-hm.Vectors-(hm.GoObjects-hm.KeyReleased)-hm.GoFree-hm.GoOther), g(hm.GoGoal), gogc, limit)
}
