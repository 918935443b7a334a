package loadbench

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/cuzk-dev/cuzk/internal/hostmem"
	"github.com/cuzk-dev/cuzk/internal/smaps"
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
	// the system), goroutine stacks in the heap, and the rest it maps
	// outside the heap (stacks, metadata). The heap's figures count pages
	// the runtime holds, resident or not: a large object's pages that were
	// never written, or pages given back to the system while their object
	// lives (a key's points once the GPU holds them), are in them too.
	GoObjects, GoFree, GoStacks, GoOther int64
	// GoHeapRSS is what of the Go heap is resident: the resident bytes of
	// its mappings (the run of adjacent anonymous mappings around a heap
	// object: heapMappings), when found (GoHeapFound). The heap's own
	// figures less this are the pages it holds that are not resident.
	GoHeapRSS   int64
	GoHeapFound bool
	// GoLive is the heap the last collection found live: what GoObjects
	// holds beyond it is garbage not yet collected (or allocated since).
	GoLive          int64
	GoGoal, GoLimit int64 // the heap goal and the memory limit
	GoGC            int64 // GOGC, as the runtime holds it (-1: off)
	// maps are the mappings, in address order (heapMappings).
	maps []smaps.Mapping
}

// heapProbe returns an object of the Go heap (allocated once, on first
// use: a package variable's new may be placed in static data), so that its
// address tells which mappings the heap lies in.
var heapProbe = sync.OnceValue(func() *[1 << 12]byte { return new([1 << 12]byte) })

// heapMappings returns the resident bytes of the run of adjacent
// anonymous mappings that holds addr, and whether one holds it. The Go
// runtime maps its heap in arenas that it places one after another from a
// fixed hint, so the run around one heap object is the heap; the system
// places every other mapping elsewhere.
func heapMappings(maps []smaps.Mapping, addr uint64) (int64, bool) {
	at, ok := smaps.Holding(maps, addr)
	if !ok || maps[at].Name != "" {
		return 0, false
	}
	lo, hi := smaps.Run(maps, at, func(m smaps.Mapping) bool { return m.Name == "" })
	var rss int64
	for _, m := range maps[lo : hi+1] {
		rss += m.Rss
	}
	return rss, true
}

// anonymous is the name of the mappings without a file.
const anonymous = "anonymous"

// readHostMemory reads the breakdown now; an error where /proc/self/smaps
// cannot be read (not Linux).
func readHostMemory() (hostMemory, error) {
	maps, err := smaps.Read(smaps.Self)
	if err != nil {
		return hostMemory{}, err
	}
	hm := fromMappings(maps)
	hm.Vectors = hostmem.Mapped()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}, {Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"}, {Name: "/gc/heap/goal:bytes"}, {Name: "/gc/gomemlimit:bytes"},
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/gogc:percent"}, {Name: "/memory/classes/heap/stacks:bytes"}}
	metrics.Read(s)
	v := func(i int) int64 { return int64(s[i].Value.Uint64()) }
	hm.GoObjects, hm.GoFree, hm.GoStacks = v(0), v(1)+v(2), v(9)
	hm.GoOther = v(3) - v(4) - hm.GoObjects - hm.GoFree - hm.GoStacks
	hm.GoGoal, hm.GoLimit, hm.GoLive, hm.GoGC = v(5), v(6), v(7), v(8)
	hm.GoHeapRSS, hm.GoHeapFound = heapMappings(hm.maps, uint64(uintptr(unsafe.Pointer(heapProbe()))))
	return hm, nil
}

// fromMappings sums the resident bytes of maps by mapping: the file
// mapped, a pseudo-name such as "[heap]", or anonymous.
func fromMappings(maps []smaps.Mapping) hostMemory {
	hm := hostMemory{Mappings: map[string]int64{}, maps: maps}
	for _, m := range maps {
		name := m.Name
		if name == "" {
			name = anonymous
		}
		hm.Mappings[name] += m.Rss
		hm.RSS += m.Rss
	}
	return hm
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
	gogc := strconv.FormatInt(hm.GoGC, 10)
	if hm.GoGC < 0 {
		gogc = "off"
	}
	heap := fmt.Sprintf("Go heap %s resident (objects %s, live at the last collection %s; free, not returned, %s; stacks %s",
		g(hm.GoHeapRSS), g(hm.GoObjects), g(hm.GoLive), g(hm.GoFree), g(hm.GoStacks))
	if !hm.GoHeapFound {
		heap = fmt.Sprintf("Go heap objects %s (live at the last collection %s), Go heap free (not returned) %s, stacks %s",
			g(hm.GoObjects), g(hm.GoLive), g(hm.GoFree), g(hm.GoStacks))
	} else if not := hm.goCounted() - hm.GoHeapRSS; not > 0 {
		heap += fmt.Sprintf("; %s of these not resident: never written, or given back while live)", g(not))
	} else {
		heap += ")"
	}
	fmt.Fprintf(w, "%sanonymous %s: solved vectors (out of heap) %s, %s, Go runtime other %s, the rest (CUDA driver, C) %s; Go heap goal %s (GOGC %s), memory limit %s\n",
		indent, g(anon), g(hm.Vectors), heap, g(hm.GoOther), g(hm.rest()), g(hm.GoGoal), gogc, limit)
}

// goCounted is what the runtime counts in its heap: objects, free pages
// not returned and stacks, resident or not.
func (hm hostMemory) goCounted() int64 { return hm.GoObjects + hm.GoFree + hm.GoStacks }

// rest is the anonymous memory that neither the vectors nor the Go
// runtime account for: the CUDA driver's, C's. Where the heap's mappings
// were not found, the runtime's figures stand for its resident heap, which
// may count pages that are not.
func (hm hostMemory) rest() int64 {
	heap := hm.GoHeapRSS
	if !hm.GoHeapFound {
		heap = hm.goCounted()
	}
	return hm.Mappings[anonymous] + hm.Mappings["[heap]"] - hm.Vectors - heap - hm.GoOther
}
