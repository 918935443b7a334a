package kbuild_test

import (
	"bytes"
	"context"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

func TestNoOpBuildRunsNvccZeroTimes(t *testing.T) {
	f := newFixture(t)
	rep := f.mustBuild()
	assert.ElementsMatch(t, []string{"a", "b", "c"}, names(rep, kbuild.Built))
	assert.Equal(t, 3, f.nvccRuns())
	assert.Equal(t, "no earlier build in this tree", whyOf(rep, "a"))

	rep = f.mustBuild()
	assert.Equal(t, 0, f.nvccRuns())
	assert.Equal(t, 3, rep.Hits)
	assert.Equal(t, 0, rep.Written, "a no-op build rewrites nothing")
}

func TestHeaderEditRebuildsExactlyItsDependentsAndRevertIsAHit(t *testing.T) {
	f := newFixture(t)
	f.mustBuild()
	f.nvccRuns()
	before := f.outputs()
	cases := []struct {
		header string
		want   []string
	}{
		{"cuda/include/fx/only_a.cuh", []string{"a"}},
		{"cuda/include/fx/bc.cuh", []string{"b", "c"}},
		{"cuda/include/fx/common.cuh", []string{"a", "b", "c"}},
		{"cuda/kernels/c.cu", []string{"c"}},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.header), func(t *testing.T) {
			old := f.edit(tc.header)
			rep := f.mustBuild()
			assert.ElementsMatch(t, tc.want, names(rep, kbuild.Built))
			assert.Equal(t, len(tc.want), f.nvccRuns())
			for _, k := range tc.want {
				assert.Contains(t, whyOf(rep, k), tc.header+" changed")
			}
			f.write(tc.header, old) // revert
			rep = f.mustBuild()
			assert.Equal(t, 0, f.nvccRuns(), "reverting is a cache hit")
			assert.Equal(t, 3, rep.Hits)
			assert.Equal(t, before, f.outputs(), "reverted tree materializes the original bytes")
		})
	}
}

func TestWhyAfterRevertComparesAgainstTheRevertedState(t *testing.T) {
	f := newFixture(t)
	f.mustBuild() // state A
	const src = "cuda/kernels/c.cu"
	orig := f.edit(src) // state B: c rebuilt
	f.mustBuild()
	f.write(src, orig) // back to A: every unit a hit
	require.Equal(t, 3, f.mustBuild().Hits)
	f.nvccRuns()

	const hdr = "cuda/include/fx/bc.cuh"
	f.edit(hdr) // state C = A plus a header edit: the why names the header only
	rep := f.mustBuild()
	assert.ElementsMatch(t, []string{"b", "c"}, names(rep, kbuild.Built))
	assert.Equal(t, hdr+" changed", whyOf(rep, "c"), "explained against A (the last build, a hit), not B")
	assert.Equal(t, 2, f.nvccRuns())
}

func TestTouchWithoutChangeRebuildsNothing(t *testing.T) {
	f := newFixture(t)
	f.mustBuild()
	f.nvccRuns()
	later := time.Now().Add(time.Hour)
	require.NoError(t, filepath.WalkDir(f.path("cuda"), func(p string, d os.DirEntry, err error) error {
		require.NoError(t, err)
		return os.Chtimes(p, later, later)
	}))
	rep := f.mustBuild()
	assert.Equal(t, 0, f.nvccRuns())
	assert.Equal(t, 3, rep.Hits)
}

func TestPinChangesRebuildEveryUnitAndSayWhy(t *testing.T) {
	cases := []struct {
		name   string
		change func(f *fixture)
		why    string
	}{
		{"arch", func(f *fixture) { f.pins.Archs = append(f.pins.Archs, "sm_90") }, "arch sm_90 added"},
		{"flag", func(f *fixture) { f.pins.Flags = append(f.pins.Flags, "-lineinfo") }, "flag -lineinfo added"},
		{"define", func(f *fixture) { f.pins.Defines = []string{"FX_DEBUG=1"} }, "define FX_DEBUG=1 added"},
		{"toolchain", func(f *fixture) { f.tc.HostCompiler += " (patched)" }, "host compiler changed"},
		{"image", func(f *fixture) { f.tc.Image = "example/cuda@sha256:" + string(bytes.Repeat([]byte("ab"), 32)) }, "image changed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.mustBuild()
			f.nvccRuns()
			tc.change(f)
			rep := f.mustBuild()
			assert.ElementsMatch(t, []string{"a", "b", "c"}, names(rep, kbuild.Built))
			assert.Equal(t, 3, f.nvccRuns())
			assert.Contains(t, whyOf(rep, "b"), tc.why)
		})
	}
}

func TestDeletedOutputsRematerializeWithoutNvcc(t *testing.T) {
	f := newFixture(t)
	f.mustBuild()
	f.nvccRuns()
	before := f.outputs()
	require.NoError(t, os.RemoveAll(f.path("cuda/fatbin")))
	rep := f.mustBuild()
	assert.Equal(t, 0, f.nvccRuns())
	assert.Equal(t, 4, rep.Written, "three fatbins and the manifest")
	assert.Equal(t, before, f.outputs())
}

func TestCorruptedCacheBlobIsDetectedAndRebuilt(t *testing.T) {
	f := newFixture(t)
	f.mustBuild()
	f.nvccRuns()
	before := f.outputs()
	var blobs []string
	require.NoError(t, filepath.WalkDir(filepath.Join(f.store.Dir(), "o"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			blobs = append(blobs, p)
		}
		return err
	}))
	require.Len(t, blobs, 3)
	b, err := os.ReadFile(blobs[0])
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	require.NoError(t, os.WriteFile(blobs[0], b, 0o644))

	rep := f.mustBuild()
	require.Len(t, names(rep, kbuild.Built), 1)
	assert.Equal(t, 1, f.nvccRuns())
	assert.Contains(t, whyOf(rep, names(rep, kbuild.Built)[0]), "cache entry missing or damaged")
	assert.Equal(t, before, f.outputs(), "the rebuilt bytes equal the originals")
}

func TestConcurrentBuildsProduceOneCorrectResult(t *testing.T) {
	f := newFixture(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.build()
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	assert.Equal(t, 3, f.nvccRuns(), "each unit compiled once across both builds")
	man, err := manifest.Decode(f.read("cuda/fatbin/manifest.json"))
	require.NoError(t, err)
	require.Len(t, man.Kernels, 3)
	require.NotNil(t, man.Pins, "the manifest records the pins that built it")
	assert.Equal(t, f.pins.CUDA.Release, man.Pins.CUDARelease)
	assert.Equal(t, f.pins.Flags, man.Pins.Flags)
	for _, k := range man.Kernels {
		assert.Equal(t, k.Size, int64(len(f.read("cuda/fatbin/"+k.Name+".fatbin"))))
	}
}

func TestCleanBuildsInDifferentDirectoriesAreByteIdentical(t *testing.T) {
	one, two := newFixture(t), newFixture(t)
	require.NotEqual(t, one.root, two.root)
	one.mustBuild()
	two.mustBuild()
	assert.Equal(t, one.outputs(), two.outputs())
}

func TestSyntaxErrorFailsOnlyThatKernel(t *testing.T) {
	f := newFixture(t)
	f.mustBuild()
	f.nvccRuns()
	before := f.outputs()
	good := f.read("cuda/kernels/b.cu")
	f.write("cuda/kernels/b.cu", append(append([]byte{}, good...), []byte("\nthis is not cuda;\n")...))

	rep, err := f.build()
	require.Error(t, err)
	var nerr *kbuild.NvccError
	require.ErrorAs(t, err, &nerr)
	assert.Equal(t, "b", nerr.Kernel)
	assert.NotZero(t, nerr.ExitCode)
	assert.Contains(t, nerr.Stderr, "b.cu")
	assert.Contains(t, err.Error(), "error")
	assert.ElementsMatch(t, []string{"a", "c"}, names(rep, kbuild.Hit))
	assert.Equal(t, []string{"b"}, names(rep, kbuild.Failed))
	assert.Equal(t, before, f.outputs(), "outputs untouched by a failed build")

	f.write("cuda/kernels/b.cu", good)
	f.nvccRuns()
	rep = f.mustBuild()
	assert.Equal(t, 0, f.nvccRuns(), "the fixed source is the cached one")
	assert.Equal(t, 3, rep.Hits)
}

func TestVerifyRebuildsHitsAndPasses(t *testing.T) {
	f := newFixture(t)
	f.mustBuild()
	f.nvccRuns()
	rep := f.mustBuild(kbuild.WithVerify(true))
	assert.Equal(t, 3, rep.Hits)
	assert.Equal(t, 3, rep.Compile)
	assert.Equal(t, 3, f.nvccRuns())
}

func TestDebugHashPrintsEveryInput(t *testing.T) {
	f := newFixture(t)
	var buf bytes.Buffer
	_, err := f.engine(kbuild.WithDebugHash(&buf)).Plan(context.Background())
	require.NoError(t, err)
	out := buf.String()
	for _, want := range []string{"HASH a: engine " + kbuild.EngineVersion, "HASH a: nvcc-build cuda_",
		"HASH a: arch sm_80", "HASH a: input cuda/include/fx/common.cuh ", "HASH c: input cuda/include/fx/bc.cuh ", "HASH b: => "} {
		assert.Contains(t, out, want)
	}
	assert.NotContains(t, out, "never.cuh")
}

func TestExplain(t *testing.T) {
	f := newFixture(t)
	xs, err := f.engine().Explain(context.Background())
	require.NoError(t, err)
	for _, x := range xs {
		assert.False(t, x.Fresh)
		assert.Equal(t, []string{"no earlier build in this tree"}, x.Why)
	}
	f.mustBuild()
	f.edit("cuda/include/fx/bc.cuh")
	f.pins.Flags = append(f.pins.Flags, "-lineinfo")
	xs, err = f.engine().Explain(context.Background())
	require.NoError(t, err)
	byName := map[string]kbuild.Explanation{}
	for _, x := range xs {
		byName[x.Unit.Name] = x
	}
	assert.Equal(t, []string{"flag -lineinfo added"}, byName["a"].Why)
	assert.Equal(t, []string{"flag -lineinfo added", "cuda/include/fx/bc.cuh changed"}, byName["c"].Why)
	assert.Equal(t, 0, f.nvccRuns()-3, "explain never compiles")
}

func TestPathEmbeddingFlagsKeyTheTreeLocation(t *testing.T) {
	one, two := newFixture(t), newFixture(t)
	plan := func(f *fixture) kbuild.Unit {
		units, err := f.engine().Plan(context.Background())
		require.NoError(t, err)
		return units[0]
	}
	assert.Equal(t, plan(one).ID, plan(two).ID, "without debug flags the key is location-independent")
	one.pins.Flags = append(one.pins.Flags, "-lineinfo")
	two.pins.Flags = append(two.pins.Flags, "-lineinfo")
	assert.NotEqual(t, plan(one).ID, plan(two).ID, "-lineinfo writes the tree's path into the fatbin")
	assert.Contains(t, plan(one).Lines, "root "+one.root)
}

func TestBuildPrintsAStartLinePerCompile(t *testing.T) {
	f := newFixture(t)
	var out bytes.Buffer
	f.mustBuild(kbuild.WithProgress(&out))
	starts := regexp.MustCompile(`(?m)^compiling (\w+) \(([1-3])/3\)…$`).FindAllStringSubmatch(out.String(), -1)
	require.Len(t, starts, 3, out.String())
	seen := map[string]bool{}
	for _, s := range starts {
		seen[s[2]] = true
		assert.Less(t, strings.Index(out.String(), s[0]), strings.Index(out.String(), "kernel "+s[1]+" "),
			"%s starts before its result line", s[1])
	}
	assert.Len(t, seen, 3, "each run numbered once")

	out.Reset()
	f.mustBuild(kbuild.WithProgress(&out))
	assert.NotContains(t, out.String(), "compiling", "a hit compiles nothing")
}
