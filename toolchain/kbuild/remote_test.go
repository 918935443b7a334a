package kbuild_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/nginx"
	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
	"github.com/cuzk-dev/cuzk/toolchain/kbuild"
)

// startNginx runs a private nginx WebDAV server for one test, skipping
// visibly where nginx is not installed.
func startNginx(t *testing.T) *nginx.Server {
	t.Helper()
	if _, err := nginx.Binary(); errors.Is(err, nginx.ErrNotInstalled) {
		t.Skip("nginx not installed (apt-get install nginx; .ci/run does): remote cache tests need a real server")
	}
	s, err := nginx.Start(context.Background(), t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Stop()) })
	return s
}

func remote(t *testing.T, url string, upload bool) cas.Cache {
	t.Helper()
	r, err := cas.NewRemote(url, cas.WithRemoteTimeout(2*time.Second))
	require.NoError(t, err)
	if !upload {
		return cas.ReadOnly(r)
	}
	return r
}

// hideNvcc replaces every PATH directory holding nvcc with a copy made of
// links to everything else in it, for the rest of the test.
func hideNvcc(t *testing.T) {
	t.Helper()
	var dirs []string
	for i, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "nvcc")); err != nil {
			dirs = append(dirs, dir)
			continue
		}
		shadow := filepath.Join(t.TempDir(), "path", filepath.Base(dir)+"-"+string(rune('a'+i)))
		require.NoError(t, os.MkdirAll(shadow, 0o755))
		ents, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range ents {
			if e.Name() != "nvcc" {
				require.NoError(t, os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(shadow, e.Name())))
			}
		}
		dirs = append(dirs, shadow)
	}
	t.Setenv("PATH", strings.Join(dirs, string(filepath.ListSeparator)))
	_, err := exec.LookPath("nvcc")
	require.Error(t, err, "nvcc is hidden")
}

// newBareFixture (made before hideNvcc: the fixture's own set-up checks
// for nvcc) is a fresh clone of the fixture tree with an empty cache
// and no nvcc: its keys come from the pins, and its compiler finder (which
// counts its calls) looks nvcc up on PATH like the real build does.
func newBareFixture(t *testing.T, searches *atomic.Int32) *fixture {
	t.Helper()
	f := newFixture(t)
	f.pins.CUDA.Nvcc = "nvcc"
	pins := f.pins
	f.tc = toolchain.Local{Identity: toolchain.PinnedIdentity(pins, "")}
	f.opts = []kbuild.Option{kbuild.WithCompiler(func(ctx context.Context) (toolchain.Local, error) {
		searches.Add(1)
		return toolchain.Detect(ctx, pins, nil)
	})}
	return f
}

func puts(t *testing.T, s *nginx.Server) int {
	t.Helper()
	reqs, err := s.Requests()
	require.NoError(t, err)
	n := 0
	for _, r := range reqs {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			n++
		}
	}
	return n
}

func TestRemoteFullHitNeedsNoToolkit(t *testing.T) {
	srv := startNginx(t)
	a := newFixture(t)
	rep := a.mustBuild(kbuild.WithRemote(remote(t, srv.URL, true)))
	assert.Equal(t, 3, rep.Uploaded)
	assert.Equal(t, 3, a.nvccRuns())
	// Every upload is a blob and then its entry: 6 PUTs, all stored.
	reqs, err := srv.WaitRequests(3+6, 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, 6, puts(t, srv))
	for _, r := range reqs {
		if r.Method == http.MethodPut {
			assert.Equal(t, http.StatusCreated, r.Status, r.Path)
		}
	}

	var searches atomic.Int32
	b := newBareFixture(t, &searches)
	c := newBareFixture(t, &searches)
	hideNvcc(t)
	before := len(reqs)
	var progress bytes.Buffer
	rep = b.mustBuild(kbuild.WithRemote(remote(t, srv.URL, false)), kbuild.WithProgress(&progress))
	assert.Equal(t, 3, rep.Fetched)
	assert.Equal(t, 3, rep.Hits)
	assert.Equal(t, 0, rep.Compile)
	assert.Equal(t, int32(0), searches.Load(), "a full remote hit never looks for nvcc")
	assert.ElementsMatch(t, []string{"a", "b", "c"}, names(rep, kbuild.HitRemote))
	assert.Equal(t, a.outputs(), b.outputs(), "fatbins and manifest byte-identical to the uploader's")
	assert.Equal(t, 3, strings.Count(progress.String(), " hit remote "), progress.String())
	reqs, err = srv.WaitRequests(before+3*2, 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, 6, puts(t, srv), "the read-only clone wrote nothing")

	// Now the local cache holds everything: no request at all.
	before = len(reqs)
	rep = b.mustBuild(kbuild.WithRemote(remote(t, srv.URL, false)))
	assert.Equal(t, 3, rep.Hits)
	assert.Equal(t, 0, rep.Fetched)
	time.Sleep(100 * time.Millisecond) // room for a request line that should not come
	reqs, err = srv.Requests()
	require.NoError(t, err)
	assert.Len(t, reqs, before, "a local hit makes no network round trip")

	xs, err := b.engine(kbuild.WithRemote(remote(t, srv.URL, false))).Explain(context.Background())
	require.NoError(t, err)
	for _, x := range xs {
		assert.Equal(t, kbuild.Hit, x.Source, x.Unit.Name)
	}
	xs, err = c.engine(kbuild.WithRemote(remote(t, srv.URL, false))).Explain(context.Background())
	require.NoError(t, err)
	for _, x := range xs {
		assert.Equal(t, kbuild.HitRemote, x.Source, x.Unit.Name)
		assert.True(t, x.Fresh)
	}
	xs, err = c.engine().Explain(context.Background())
	require.NoError(t, err)
	for _, x := range xs {
		assert.Equal(t, kbuild.Built, x.Source, "without the remote: %s", x.Unit.Name)
	}
	assert.Equal(t, int32(0), searches.Load())
}

func TestRemoteMissWithoutToolkitFailsClearly(t *testing.T) {
	srv := startNginx(t)
	var searches atomic.Int32
	b := newBareFixture(t, &searches)
	hideNvcc(t)
	_, err := b.build(kbuild.WithRemote(remote(t, srv.URL, false)))
	require.Error(t, err)
	assert.ErrorIs(t, err, toolchain.ErrNoNvcc)
	assert.Equal(t, int32(1), searches.Load(), "one search for the whole build")
	assert.Equal(t, 1, strings.Count(err.Error(), toolchain.ErrNoNvcc.Error()), "one message for the three kernels:\n%v", err)
	assert.Contains(t, err.Error(), "kernels a, b, c: ")
	assert.NoFileExists(t, b.path("cuda/fatbin/manifest.json"))
}

func TestRemoteDamageIsReportedAndRebuilt(t *testing.T) {
	srv := startNginx(t)
	a := newFixture(t)
	rep := a.mustBuild(kbuild.WithRemote(remote(t, srv.URL, true)))
	require.Equal(t, 3, rep.Uploaded)
	damage := map[string]func(path string){
		"a": func(p string) { // other bytes, same length
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			b[len(b)/2] ^= 0xff
			require.NoError(t, os.WriteFile(p, b, 0o644))
		},
		"b": func(p string) { // truncated
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b[:len(b)/2], 0o644))
		},
		"c": func(p string) { require.NoError(t, os.Remove(p)) }, // the entry names a missing blob
	}
	for _, r := range rep.Results {
		damage[r.Unit.Name](srv.Object("cas", cas.SumOutput(r.Fatbin).String()))
	}

	b := newFixture(t)
	var progress bytes.Buffer
	rep = b.mustBuild(kbuild.WithRemote(remote(t, srv.URL, false)), kbuild.WithProgress(&progress))
	assert.ElementsMatch(t, []string{"a", "b", "c"}, names(rep, kbuild.Built), "no damaged copy is used")
	assert.Equal(t, 0, rep.Fetched)
	for _, k := range []string{"a", "b", "c"} {
		assert.Contains(t, whyOf(rep, k), "remote copy damaged, not used", k)
	}
	assert.Contains(t, whyOf(rep, "a"), "has other bytes")
	assert.Contains(t, whyOf(rep, "c"), "the server lacks it")
	assert.Equal(t, a.outputs(), b.outputs())
	assert.NotContains(t, progress.String(), "warning:", "damage is per kernel, not a dead server")
}

// stopAfterFirstHit stops the server once the first remote Get succeeds,
// from inside the fetch slot (so with one slot, no other fetch overlaps).
type stopAfterFirstHit struct {
	cas.Cache
	once sync.Once
	stop func()
}

func (s *stopAfterFirstHit) Get(ctx context.Context, id cas.ActionID) (cas.Entry, map[string][]byte, error) {
	e, data, err := s.Cache.Get(ctx, id)
	if err == nil {
		s.once.Do(s.stop)
	}
	return e, data, err
}

func TestRemoteServerStoppedMidBuild(t *testing.T) {
	srv := startNginx(t)
	a := newFixture(t)
	require.Equal(t, 3, a.mustBuild(kbuild.WithRemote(remote(t, srv.URL, true))).Uploaded)

	b := newFixture(t)
	r := &stopAfterFirstHit{Cache: remote(t, srv.URL, true), stop: func() { require.NoError(t, srv.Stop()) }}
	var progress bytes.Buffer
	rep := b.mustBuild(kbuild.WithRemote(r), kbuild.WithFetchJobs(1), kbuild.WithProgress(&progress))
	assert.Len(t, names(rep, kbuild.HitRemote), 1)
	assert.Len(t, names(rep, kbuild.Built), 2, "the rest built locally")
	assert.Equal(t, 0, rep.Uploaded, "no upload to a dead server")
	assert.Equal(t, 1, strings.Count(progress.String(), "warning:"), "one warning line:\n%s", progress.String())
	assert.Contains(t, progress.String(), "unavailable")
	assert.Equal(t, a.outputs(), b.outputs())
}

func TestReadOnlyClientNeverWrites(t *testing.T) {
	srv := startNginx(t)
	b := newFixture(t)
	rep := b.mustBuild(kbuild.WithRemote(remote(t, srv.URL, false)))
	assert.Len(t, names(rep, kbuild.Built), 3)
	assert.Equal(t, 0, rep.Uploaded)
	reqs, err := srv.WaitRequests(3, 5*time.Second)
	require.NoError(t, err)
	require.Len(t, reqs, 3, "one lookup per kernel")
	for _, r := range reqs {
		assert.Equal(t, http.MethodGet, r.Method)
		assert.Equal(t, http.StatusNotFound, r.Status)
		assert.True(t, strings.HasPrefix(r.Path, nginx.Location+"/ac/"), r.Path)
	}
	ents, err := os.ReadDir(srv.Root)
	require.NoError(t, err)
	assert.Empty(t, ents, "nothing stored on the server")

	// The same build with uploads on does write: the log check can fail.
	c := newFixture(t)
	assert.Equal(t, 3, c.mustBuild(kbuild.WithRemote(remote(t, srv.URL, true))).Uploaded)
	_, err = srv.WaitRequests(3+3+6, 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, 6, puts(t, srv))
}

func TestConcurrentUploadsOfTheSameAction(t *testing.T) {
	srv := startNginx(t)
	one, two := newFixture(t), newFixture(t)
	var wg sync.WaitGroup
	reps := make([]kbuild.Report, 2)
	errs := make([]error, 2)
	for i, f := range []*fixture{one, two} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = f.build(kbuild.WithRemote(remote(t, srv.URL, true)))
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	assert.Equal(t, 3, reps[0].Uploaded+reps[0].Fetched)
	assert.Equal(t, 3, reps[1].Uploaded+reps[1].Fetched)
	assert.GreaterOrEqual(t, reps[0].Uploaded+reps[1].Uploaded, 3)

	var searches atomic.Int32
	c := newBareFixture(t, &searches)
	hideNvcc(t)
	rep := c.mustBuild(kbuild.WithRemote(remote(t, srv.URL, false)))
	assert.Equal(t, 3, rep.Fetched, "every object whole after the racing uploads")
	assert.Equal(t, one.outputs(), c.outputs())
	assert.Equal(t, two.outputs(), c.outputs())
}

func TestRemoteServerErrorsCostOneWarning(t *testing.T) {
	cases := map[string]struct {
		handler http.HandlerFunc
		warn    string
	}{
		"every request 503": {func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "down for maintenance: "+r.Header.Get("Authorization"), http.StatusServiceUnavailable)
		}, "unavailable"},
		"reads miss, writes refused": {func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut {
				http.Error(w, "no", http.StatusForbidden)
				return
			}
			http.NotFound(w, r)
		}, "uploads to"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				tc.handler(w, r)
			}))
			defer srv.Close()
			f := newFixture(t)
			const token = "tok-never-printed-7c1e"
			r, err := cas.NewRemote(srv.URL, cas.WithCredentials(cas.Credentials{Token: token}))
			require.NoError(t, err)
			var progress bytes.Buffer
			// One compile at a time: with two, both uploads can be in flight
			// before the first refusal comes back, and neither can be recalled.
			rep := f.mustBuild(kbuild.WithRemote(r), kbuild.WithProgress(&progress), kbuild.WithFetchJobs(1), kbuild.WithJobs(1))
			assert.NotContains(t, progress.String(), token)
			assert.Len(t, names(rep, kbuild.Built), 3, "the build goes on locally")
			assert.Equal(t, 0, rep.Uploaded)
			assert.Equal(t, 1, strings.Count(progress.String(), "warning:"), progress.String())
			assert.Contains(t, progress.String(), tc.warn)
			assert.LessOrEqual(t, int(n.Load()), 4, "the server is given up on after its first failure")
		})
	}
}

func TestVerifyDetectsAPoisonedRemote(t *testing.T) {
	srv := startNginx(t)
	a := newFixture(t)
	rep := a.mustBuild(kbuild.WithRemote(remote(t, srv.URL, true)))
	require.Equal(t, 3, rep.Uploaded)
	// A writer with upload rights stores other bytes, under a well-formed
	// entry and their own correct digest: no read-side check can see it.
	var victim kbuild.Result
	for _, r := range rep.Results {
		if r.Unit.Name == "b" {
			victim = r
		}
	}
	poison := append(bytes.Clone(victim.Fatbin), []byte("trailing bytes")...)
	_, err := remote(t, srv.URL, true).Put(context.Background(), victim.Unit.ID, map[string][]byte{"fatbin": poison}, victim.Unit.Lines)
	require.NoError(t, err)

	b := newFixture(t)
	_, err = b.build(kbuild.WithRemote(remote(t, srv.URL, false)), kbuild.WithVerify(true))
	require.Error(t, err, "CUZK_VERIFY=1 recompiles every hit, remote ones included")
	assert.Contains(t, err.Error(), "verify b: rebuilt fatbin sha256")
	assert.NoFileExists(t, b.path("cuda/fatbin/manifest.json"), "nothing materialized")
}
