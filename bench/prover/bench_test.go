package proverbench

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/groth16/devkeys"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// oursEnv makes the test binary act as cuzk's side (OursMain), so Run can
// be tested with this binary as its child.
const oursEnv = "CUZK_PROVERBENCH_TEST_OURS"

func TestMain(m *testing.M) {
	if os.Getenv(oursEnv) == "1" {
		os.Exit(OursMain(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestParseSizes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		bad  bool
	}{
		{in: "2^16,2^18", want: []int{1 << 16, 1 << 18}},
		{in: "16, 20", want: []int{1 << 16, 1 << 20}},
		{in: "70000", want: []int{70000}},
		{in: "2^9", bad: true},
		{in: "2^28", bad: true},
		{in: "", bad: true},
		{in: "2^x", bad: true},
		{in: "500", bad: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSizes(tc.in)
			if tc.bad {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	assert.Equal(t, "2^18", SizeString(1<<18))
	assert.Equal(t, "70000", SizeString(70000))
}

// fakeSize builds a Size whose medians are the given milliseconds.
func fakeSize(target, synthMS, proveMS, gnarkProveMS, gnarkSolveMS int) Size {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	return Size{
		Ours: &OursReport{Target: target, Constraints: 1_000_000, Private: 900, GOMAXPROCS: 2,
			// medians: the middle of three unsorted samples
			Synthesis: ms(synthMS+50, synthMS, synthMS-10), Prove: ms(proveMS, proveMS+1, proveMS-1),
			Quotient: ms(1, 1, 1), MSMA: ms(2, 2, 2), MSMB1: ms(3, 3, 3), MSMB2: ms(4, 4, 4), MSMLH: ms(5, 5, 5),
			SetupCached: true},
		OursRSS: 300 << 20,
		Gnark: &GnarkReport{Gnark: "v0.14.0", Secret: 100, Internal: 800, Solve: ms(gnarkSolveMS),
			Prove: ms(gnarkProveMS), Total: ms(gnarkSolveMS + gnarkProveMS), Setup: 2 * time.Second},
		GnarkRSS: 400 << 20,
	}
}

func TestTableAndTargets(t *testing.T) {
	// 1M constraints in 200 ms on one core: 5 M/s (pass); prove 800 vs
	// 1000 ms (pass); total: median of per-run sums 1001 vs 1100 (pass);
	// the miss case sums to 2001 vs 1100.
	pass := fakeSize(1<<20, 200, 800, 1000, 100)
	// 1M constraints in 800 ms: 1.25 M/s (miss); prove 1200 vs 1000 (miss).
	miss := fakeSize(1<<18, 800, 1200, 1000, 100)
	res := &Result{Procs: 2, NumCPU: 2, Runs: 3, Sizes: []Size{pass, miss}}
	var buf bytes.Buffer
	require.NoError(t, res.WriteTable(&buf))
	out := buf.String()
	line := func(prefix string) string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, prefix) {
				return l
			}
		}
		t.Fatalf("no line %q in\n%s", prefix, out)
		return ""
	}
	assert.Contains(t, line("porep-synth  "), "2^20")
	assert.Regexp(t, `5\.00 PASS\s+1\.25 MISS$`, line("  M constraints/s, one core"))
	assert.Regexp(t, `0\.80x PASS\s+1\.20x MISS$`, line("cuzk/gnark prove"))
	assert.Regexp(t, `0\.91x PASS\s+1\.82x MISS$`, line("cuzk/gnark synth+prove"))
	assert.Regexp(t, `900 \(100 \+ 800\)`, line("private wires"))
	assert.Contains(t, line("cuzk peak RSS"), "300 MiB")
	assert.Contains(t, line("setup cuzk / gnark"), "cached / 2.00 s")
	assert.Regexp(t, `at once:\s+2\.0 ms`, line("cuzk MSM A   G1"))
	assert.Regexp(t, `after them, alone\s+4\.0 ms`, line("cuzk MSM B   G2"), "the G2 MSM runs after the G1 MSMs")
	assert.Less(t, strings.Index(out, "cuzk MSM L‖H G1"), strings.Index(out, "cuzk MSM B   G2"), "G1 group first")

	err := res.Err()
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "2^20", "the passing size reports nothing")
	assert.Equal(t, 3, strings.Count(err.Error(), "2^18"), "synthesis, prove and total miss")
	require.NoError(t, (&Result{Sizes: []Size{pass}}).Err())
}

// readCircuit decodes WriteCircuit's output (the test's own reader, written
// from the format comment, independent of the writer).
func readCircuit(t *testing.T, r io.Reader) (counts [4]uint32, coeffs []fr.Element, m [3]r1cs.Matrix, w []fr.Element) {
	t.Helper()
	u32s := func(n int) []uint32 {
		v := make([]uint32, n)
		require.NoError(t, binary.Read(r, binary.LittleEndian, v))
		return v
	}
	elems := func(n int) []fr.Element {
		v := make([]fr.Element, n)
		var b [32]byte
		for i := range v {
			_, err := io.ReadFull(r, b[:])
			require.NoError(t, err)
			require.NoError(t, v[i].SetBytesCanonical(b[:]))
		}
		return v
	}
	head := u32s(1)
	require.Equal(t, "CZR1", string(binary.LittleEndian.AppendUint32(nil, head[0])))
	copy(counts[:], u32s(4))
	coeffs = elems(int(counts[3]))
	for i := range m {
		terms := int(u32s(1)[0])
		m[i] = r1cs.Matrix{RowPtr: u32s(int(counts[2]) + 1), Col: u32s(terms), CoeffID: u32s(terms)}
	}
	w = elems(int(counts[0] + counts[1]))
	_, err := r.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF, "nothing after the assignment")
	return counts, coeffs, m, w
}

func TestWriteCircuit(t *testing.T) {
	c, err := porep.New(porep.MinTarget, 3)
	require.NoError(t, err)
	sys, err := r1cs.Compile(c)
	require.NoError(t, err)
	asg, err := r1cs.Solve(c, r1cs.WithShape(sys))
	require.NoError(t, err)
	var buf bytes.Buffer
	require.NoError(t, WriteCircuit(&buf, sys, asg))

	counts, coeffs, m, w := readCircuit(t, &buf)
	assert.Equal(t, [4]uint32{uint32(sys.NbPublic), uint32(sys.NbPrivate), uint32(sys.NbConstraints), uint32(len(sys.Coeffs))}, counts)
	assert.Equal(t, sys.Coeffs, coeffs)
	for i, want := range []*r1cs.Matrix{&sys.A, &sys.B, &sys.C} {
		for row := range sys.NbConstraints {
			gotCols, gotIDs := m[i].Row(row)
			wantCols, wantIDs := want.Row(row)
			require.Equal(t, wantCols, gotCols, "matrix %d row %d", i, row)
			require.Equal(t, wantIDs, gotIDs, "matrix %d row %d", i, row)
		}
	}
	assert.Equal(t, append(append([]fr.Element(nil), asg.Public...), asg.Private...), w)

	short := *asg
	short.Private = short.Private[1:]
	require.Error(t, WriteCircuit(io.Discard, sys, &short), "assignment of another shape")
}

func TestMeasureOursCachesKeys(t *testing.T) {
	keys := t.TempDir()
	cfg := OursConfig{Target: porep.MinTarget, Runs: 1, KeyDir: keys, Seed: 1, SetupSeed: 1}
	rep, err := MeasureOurs(context.Background(), cfg)
	require.NoError(t, err)
	assert.False(t, rep.SetupCached)
	assert.Positive(t, rep.Setup)
	assert.Equal(t, 2, rep.Proofs)
	assert.Equal(t, 2, rep.Verified)
	require.Len(t, rep.Synthesis, 1)
	assert.LessOrEqual(t, rep.MSMLH[0], rep.Prove[0], "an MSM inside Prove")
	assert.LessOrEqual(t, rep.Constraints+rep.Public, porep.MinTarget)

	cfg.Export = filepath.Join(t.TempDir(), "c.czr1")
	again, err := MeasureOurs(context.Background(), cfg)
	require.NoError(t, err)
	assert.True(t, again.SetupCached, "second run loads the keys")
	assert.Equal(t, 2, again.Verified)
	st, err := os.Stat(cfg.Export)
	require.NoError(t, err)
	assert.Positive(t, st.Size())

	_, err = MeasureOurs(context.Background(), OursConfig{Target: porep.MinTarget})
	require.Error(t, err, "zero runs")
}

// TestRunAgainstGnark runs the whole comparison at the smallest size: this
// test binary as cuzk's side, bench/gnark built and run as gnark's.
func TestRunAgainstGnark(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the gnark side (bench/gnark) as a child process; skipped under -short")
	}
	exe, err := os.Executable()
	require.NoError(t, err)
	t.Setenv(oursEnv, "1")
	res, err := Run(context.Background(), Config{Sizes: []int{porep.MinTarget}, Runs: 1, Rounds: 2, Procs: 2,
		KeyDir: t.TempDir(), OursCommand: []string{exe}, GnarkModule: filepath.Join("..", "..", "bench", "gnark")})
	require.NoError(t, err)
	require.Len(t, res.Sizes, 1)
	s := res.Sizes[0]
	assert.Equal(t, 4, s.Gnark.Verified, "two rounds of a warm-up and one timed proof")
	assert.Equal(t, 4, s.Ours.Verified)
	assert.Len(t, s.Ours.Prove, 2, "samples of both rounds")
	assert.Len(t, s.Gnark.Total, 2)
	assert.Equal(t, 2, res.Runs)
	assert.Equal(t, s.Ours.Constraints, s.Gnark.Constraints)
	assert.Equal(t, s.Ours.Private, s.Gnark.Secret+s.Gnark.Internal)
	assert.Positive(t, s.Gnark.Internal, "gnark's solver computes the multiplication outputs")
	assert.Equal(t, 2, s.Ours.GOMAXPROCS)
	assert.Equal(t, 2, s.Gnark.GOMAXPROCS)
	assert.Positive(t, s.OursRSS)
	assert.Positive(t, s.GnarkRSS)
	var buf bytes.Buffer
	require.NoError(t, res.WriteTable(&buf))
	assert.Contains(t, buf.String(), "gnark v0.14.0")
}

func TestRunRejectsBadConfig(t *testing.T) {
	for field, cfg := range map[string]Config{
		"Runs":        {Runs: -1},
		"Rounds":      {Rounds: -1},
		"Procs":       {Procs: -2},
		"Sizes":       {Sizes: []int{}},
		"OursCommand": {OursCommand: []string{}},
	} {
		t.Run(field, func(t *testing.T) {
			_, err := Run(context.Background(), cfg)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "Config."+field)
		})
	}
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := Config{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, DefaultSizes, cfg.Sizes)
	assert.Equal(t, 3, cfg.Runs)
	assert.Equal(t, 1, cfg.Rounds)
	assert.Equal(t, runtime.GOMAXPROCS(0), cfg.Procs)
	assert.Equal(t, devkeys.Dir(), cfg.KeyDir)
	assert.Equal(t, "bench/gnark", cfg.GnarkModule)
	assert.Empty(t, cfg.GnarkBinary, "built from the module")
	assert.Equal(t, "ours", cfg.OursCommand[len(cfg.OursCommand)-1])
	assert.NotNil(t, cfg.Log)

	cfg, err = Config{KeyDir: "x", NoKeyCache: true}.withDefaults()
	require.NoError(t, err)
	assert.Empty(t, cfg.KeyDir, "no key cache")
}

// TestDependencies keeps this package inside the prover's rules and gnark
// out of cuzk's module: only the nested bench/gnark module requires it.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "./...").CombinedOutput()
	require.NoError(t, err, "%s", out)
	const cuzk = "github.com/cuzk-dev/cuzk/"
	banned := []string{cuzk + "daemon", cuzk + "ci", cuzk + "toolchain/kbuild", cuzk + "magefiles", "github.com/consensys/gnark"}
	for _, dep := range strings.Fields(string(out)) {
		for _, b := range banned {
			assert.False(t, dep == b || strings.HasPrefix(dep, b+"/"), "bench/prover must not depend on %s", dep)
		}
	}
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	require.NoError(t, err)
	assert.NotContains(t, string(mod), "github.com/consensys/gnark ", "gnark is required by bench/gnark only")
}
