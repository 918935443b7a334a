package gpu

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cuzk-dev/cuzk/internal/stats"
)

// A KeyPlan is how one proving key's bases use a device's memory beside the
// working memory of its proofs: which bases sets stay resident, which are
// streamed from the host for every proof, and in how many points each MSM
// over a set runs (msm_chunk.go). Backend.PlanKey makes it.
//
// On a device that holds the whole key, the quotient's vectors and the
// scratch of the largest MSM in one pass, every set is resident and every
// MSM runs in one pass, as without a plan. Otherwise the planner tries chunk
// sizes from 2^27 points down to 2^18 in G1 and, on their own, from 2^26
// down to 2^17 in G2: they bound the MSM scratch, and what the budget has
// left beside the quotient, the scratch and the two stream buffers goes to
// resident sets, in priority order, each that fits the room left: G1
// before G2 and smaller before larger. A G2 MSM does about three times a
// G1 MSM's work per point over twice its bytes, so its bases' upload hides
// best behind its own pipeline; a small set's MSM is short and hides its
// upload least. Among chunk sizes it takes the one with the least estimated
// cost: the streamed bytes at planLinkRate plus a fixed cost per chunk
// (the bucket and window stages, which a chunk repeats).
//
// Each chunk size is tried with the quotient in three work vectors and in
// two (Lean, QuotientHLeanBytes): the lean quotient leaves one vector's
// room (4 GiB at 2^27) to resident sets and larger chunks, at the cost of
// sending that vector's bytes over the link while the device waits.
type KeyPlan struct {
	Sets []SetPlan
	// Budget is the device memory the plan was made for (the Backend's
	// memory limit, or the free memory with what the Backend holds, less
	// what other keys hold resident).
	Budget int64
	// Quotient, Arena and Stream are the working memory the plan keeps for
	// a proof: the quotient's vectors and tables (QuotientHBytes), the MSM
	// scratch for one chunk, and the two buffers streamed bases pass
	// through (0 when every set is resident).
	Quotient, Arena, Stream int64
	// Lean is true where the quotient keeps two work vectors, not three.
	Lean bool
	// vector is the bytes of one work vector, which a lean quotient sends
	// over the link unhidden (cost).
	vector int64
}

// SetPlan is the plan of one bases set.
type SetPlan struct {
	Curve    string // "g1" or "g2"
	Points   int
	Bytes    int64
	Resident bool
	// Chunk is the points of one MSM pass over the set (Points: one pass).
	Chunk int
}

// ResidentBytes is the device memory of the plan's resident sets.
func (k KeyPlan) ResidentBytes() int64 {
	var n int64
	for _, s := range k.Sets {
		if s.Resident {
			n += s.Bytes
		}
	}
	return n
}

// StreamedBytes is what a proof sends of the key's bases over the link.
func (k KeyPlan) StreamedBytes() int64 {
	var n int64
	for _, s := range k.Sets {
		if !s.Resident {
			n += s.Bytes
		}
	}
	return n
}

// Peak is the device memory a proof holds at most under the plan.
func (k KeyPlan) Peak() int64 { return k.ResidentBytes() + k.Quotient + k.Arena + k.Stream }

// Whole reports whether the plan is the one without a plan: every set
// resident, every MSM in one pass.
func (k KeyPlan) Whole() bool {
	for _, s := range k.Sets {
		if !s.Resident || s.Chunk < s.Points {
			return false
		}
	}
	return true
}

// String describes the plan in one line, for logs and status.
func (k KeyPlan) String() string {
	var b strings.Builder
	res := 0
	for _, s := range k.Sets {
		if s.Resident {
			res++
		}
	}
	fmt.Fprintf(&b, "%d of %d bases sets resident (%s), %s streamed a proof; peak %s of %s", res, len(k.Sets),
		stats.FormatGiB(k.ResidentBytes()), stats.FormatGiB(k.StreamedBytes()), stats.FormatGiB(k.Peak()),
		stats.FormatGiB(k.Budget))
	if k.Lean {
		fmt.Fprintf(&b, "; quotient in two work vectors (%s)", stats.FormatGiB(k.Quotient))
	}
	for _, s := range k.Sets {
		where := "resident"
		if !s.Resident {
			where = "streamed"
		}
		fmt.Fprintf(&b, "; %s %d points %s", s.Curve, s.Points, where)
		if s.Chunk < s.Points {
			fmt.Fprintf(&b, " in chunks of %d", s.Chunk)
		}
	}
	return b.String()
}

// setShape is one bases set as the planner sees it.
type setShape struct {
	g2     bool
	points int
}

func (s setShape) pointBytes() int64 {
	if s.g2 {
		return g2PointBytes
	}
	return g1PointBytes
}

func (s setShape) bytes() int64 { return int64(s.points) * s.pointBytes() }

// Affine point sizes (gnark-crypto's G1Affine and G2Affine).
const (
	g1PointBytes = 96
	g2PointBytes = 192
)

// Planner constants: the chunk sizes it tries (log2; G2 chunks one less,
// the same bytes at most) and its cost model (planChunkCost per chunk of a G1 MSM,
// three times that for G2, from the window stages measured at 2^27:
// docs/perf.md; planLinkRate bytes a second for streamed bases, a PCIe 4
// link's, so that the model leans towards residency).
const (
	planMaxChunkLog = 27
	planMinChunkLog = 18
	planChunkCost   = 0.012 // seconds
	planLinkRate    = 25e9
)

// quotientNeed is the device memory of the quotient over 2^logN, in three
// work vectors (full) and in two (lean), and the bytes of one vector.
type quotientNeed struct{ full, lean, vector int64 }

func quotientNeedOf(logN uint32) quotientNeed {
	return quotientNeed{QuotientHBytes(logN), QuotientHLeanBytes(logN), vectorBytes(1, logN)}
}

// with returns the quotient's bytes, lean or not, and fills kp's quotient.
func (q quotientNeed) with(kp *KeyPlan, lean bool) {
	kp.Quotient, kp.Lean, kp.vector = q.full, false, 0
	if lean {
		kp.Quotient, kp.Lean, kp.vector = q.lean, true, q.vector
	}
}

// arenaFunc gives the MSM scratch of an MSM of points points (G2 when g2)
// in passes of chunk points (chunk = points: one pass), the carry of its
// buckets included.
type arenaFunc func(g2 bool, points, chunk int) int64

// planKey plans sets (in the order groth16.ProvingKey.Bases lists them,
// G1 then G2) within budget bytes, keeping room for the quotient, lean or
// not. It fails with ErrDeviceMemory when not even the smallest chunks
// with every set streamed fit beside the lean quotient.
func planKey(sets []setShape, q quotientNeed, budget int64, arena arenaFunc) (KeyPlan, error) {
	var all, whole int64
	for _, s := range sets {
		all += s.bytes()
		whole = max(whole, arena(s.g2, s.points, s.points))
	}
	best, bestCost := KeyPlan{}, math.Inf(1)
	for _, lean := range []bool{false, true} {
		kp := KeyPlan{Budget: budget}
		q.with(&kp, lean)
		if all+kp.Quotient+whole > budget {
			continue
		}
		kp.Arena = whole
		for _, s := range sets {
			kp.Sets = append(kp.Sets, setPlan(s, true, s.points))
		}
		if !lean {
			return kp, nil // nothing changes
		}
		best, bestCost = kp, kp.cost()
	}
	order := make([]int, len(sets)) // residency priority
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if sets[a].g2 != sets[b].g2 {
			if sets[a].g2 {
				return 1
			}
			return -1
		}
		return cmp.Compare(sets[a].bytes(), sets[b].bytes())
	})
	for _, lean := range []bool{false, true} {
		for e1 := planMaxChunkLog; e1 >= planMinChunkLog; e1-- {
			for e2 := planMaxChunkLog - 1; e2 >= planMinChunkLog-1; e2-- {
				p, ok := planChunked(sets, order, [2]int{e1, e2}, q, lean, budget, arena)
				if !ok {
					continue
				}
				if c := p.cost(); c < bestCost {
					best, bestCost = p, c
				}
			}
		}
	}
	if math.IsInf(bestCost, 1) {
		p := planAllStreamed(sets, [2]int{planMinChunkLog, planMinChunkLog - 1}, q, true, budget, arena)
		return KeyPlan{}, fmt.Errorf("%w: a key of %s needs at least %s beside it (quotient %s in two work vectors, MSM scratch %s, stream buffers %s), budget %s",
			ErrDeviceMemory, stats.FormatGiB(all), stats.FormatGiB(p.Peak()), stats.FormatGiB(p.Quotient),
			stats.FormatGiB(p.Arena), stats.FormatGiB(p.Stream), stats.FormatGiB(budget))
	}
	return best, nil
}

// chunkOf is a set's chunk for chunks of 2^e[0] points in G1 and 2^e[1]
// in G2.
func chunkOf(s setShape, e [2]int) int {
	if s.g2 {
		return min(s.points, 1<<e[1])
	}
	return min(s.points, 1<<e[0])
}

func setPlan(s setShape, resident bool, chunk int) SetPlan {
	curve := "g1"
	if s.g2 {
		curve = "g2"
	}
	return SetPlan{Curve: curve, Points: s.points, Bytes: s.bytes(), Resident: resident, Chunk: chunk}
}

// planAllStreamed is the plan with chunks of 2^e (G1, G2), the quotient
// lean or not, and no set resident.
func planAllStreamed(sets []setShape, e [2]int, q quotientNeed, lean bool, budget int64, arena arenaFunc) KeyPlan {
	kp := KeyPlan{Budget: budget}
	q.with(&kp, lean)
	for _, s := range sets {
		c := chunkOf(s, e)
		kp.Arena = max(kp.Arena, arena(s.g2, s.points, c))
		kp.Stream = max(kp.Stream, 2*int64(c)*s.pointBytes())
		kp.Sets = append(kp.Sets, setPlan(s, false, c))
	}
	return kp
}

// planChunked plans chunks of 2^e points (G1, G2), the quotient lean or
// not: the sets in priority order resident where each fits the room left
// beside the working memory; false where not even the working memory fits.
func planChunked(sets []setShape, order []int, e [2]int, q quotientNeed, lean bool, budget int64, arena arenaFunc) (KeyPlan, bool) {
	kp := planAllStreamed(sets, e, q, lean, budget, arena)
	room := budget - kp.Quotient - kp.Arena
	var all int64
	for _, s := range sets {
		all += s.bytes()
	}
	if all <= room { // every set resident, in chunks: no stream buffers
		for i := range kp.Sets {
			kp.Sets[i].Resident = true
		}
		kp.Stream = 0
		return kp, true
	}
	room -= kp.Stream
	if room < 0 {
		return KeyPlan{}, false
	}
	for _, i := range order {
		if b := sets[i].bytes(); b <= room {
			kp.Sets[i].Resident = true
			room -= b
		}
	}
	return kp, true
}

// cost is the planner's estimate of what the plan adds to a proof, in
// seconds: streamed bytes over the link, the chunks' repeated stages, and
// a lean quotient's unhidden upload of one vector.
func (k KeyPlan) cost() float64 {
	c := float64(k.StreamedBytes()+k.vector) / planLinkRate
	for _, s := range k.Sets {
		per := planChunkCost
		if s.Curve == "g2" {
			per *= 3
		}
		c += per * float64((s.Points+s.Chunk-1)/s.Chunk)
	}
	return c
}
