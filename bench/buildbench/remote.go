package buildbench

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/internal/nginx"
	"github.com/cuzk-dev/cuzk/toolchain"
	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

// Targets for the remote cache rows, from the remote cache's goals
// (docs/perf.md, "Remote kernel cache"): a fresh clone served by a warm
// remote builds in a minute with no compiler, and the no-op build keeps
// its budget with a remote configured.
const (
	WarmRemoteTarget = 60 * time.Second
)

// CloneBuild is one timed `go run mage.go build` in a fresh clone.
type CloneBuild struct {
	Name     string
	Wall     time.Duration
	Units    int
	Hits     int
	Fetched  int // kernels from the remote
	Compiles int // nvcc runs
	Uploaded int
	Target   time.Duration // 0: for comparison only
}

// RemoteResult is the remote cache part of the benchmark.
type RemoteResult struct {
	Cold, Warm CloneBuild
	// FreshGo is Warm again in another clone with empty Go build and mage
	// caches: what a new machine also pays to compile the Go code.
	FreshGo *CloneBuild
	NoOp    Timing
	// NoOpRequests is how many requests the server saw during the no-op
	// builds (the goal is none: a local hit never asks the remote).
	NoOpRequests int
	// WarmPuts counts writes from the read-only clones (the goal is none).
	WarmPuts int
	// Identical says the warm clone's cuda/fatbin equals the cold one's.
	Identical bool
}

// MeasureRemote clones repo (git clone: committed sources only) into fresh
// directories and times `go run mage.go build` against a private nginx
// WebDAV server started for the run: first with nvcc, an empty local cache
// and an empty remote, uploading (Cold); then in another clone with an
// empty local cache, the now warm remote read-only and nvcc hidden from
// PATH (Warm, and with empty Go caches FreshGo when freshGo is set); then
// noOps no-op builds in the warm clone. Everything lives in a temporary
// directory that is removed afterwards.
func MeasureRemote(ctx context.Context, repo string, noOps int, freshGo bool, log *slog.Logger) (RemoteResult, error) {
	var res RemoteResult
	work, err := os.MkdirTemp("", "cuzk-remotebench-")
	if err != nil {
		return res, fmt.Errorf("remote bench: %w", err)
	}
	defer os.RemoveAll(work) // best effort: a leftover temp dir harms nothing
	srv, err := nginx.Start(ctx, filepath.Join(work, "nginx"))
	if err != nil {
		return res, fmt.Errorf("remote bench: %w", err)
	}
	defer srv.Stop()
	hidden, err := PathWithout(os.Getenv("PATH"), "nvcc", filepath.Join(work, "path"))
	if err != nil {
		return res, fmt.Errorf("remote bench: %w", err)
	}
	base := []string{toolchain.EnvToolchain + "=native", toolchain.PinVariable("remote_cache") + "=" + srv.URL}

	log.Info("remote bench: cold remote, nvcc installed")
	a := filepath.Join(work, "a")
	env := append(base, cas.EnvDir+"="+filepath.Join(work, "cache-a"), toolchain.PinVariable("remote_cache_upload")+"=1")
	if res.Cold, err = cloneBuild(ctx, repo, a, "fresh clone, empty local cache, cold remote, nvcc installed", env); err != nil {
		return res, err
	}
	before, err := srv.Requests()
	if err != nil {
		return res, fmt.Errorf("remote bench: %w", err)
	}

	log.Info("remote bench: warm remote, nvcc hidden")
	b := filepath.Join(work, "b")
	warmEnv := append(base, cas.EnvDir+"="+filepath.Join(work, "cache-b"), "PATH="+hidden)
	if res.Warm, err = cloneBuild(ctx, repo, b, "fresh clone, empty local cache, warm remote, no nvcc", warmEnv); err != nil {
		return res, err
	}
	res.Warm.Target = WarmRemoteTarget
	if res.Identical, err = sameDir(filepath.Join(a, "cuda", "fatbin"), filepath.Join(b, "cuda", "fatbin")); err != nil {
		return res, err
	}
	if freshGo {
		log.Info("remote bench: warm remote, nvcc hidden, empty Go caches")
		c := filepath.Join(work, "c")
		env := append(base, cas.EnvDir+"="+filepath.Join(work, "cache-c"), "PATH="+hidden,
			"GOCACHE="+filepath.Join(work, "gocache"), "MAGEFILE_CACHE="+filepath.Join(work, "magecache"))
		fg, err := cloneBuild(ctx, repo, c, "the same, empty Go build and mage caches too", env)
		if err != nil {
			return res, err
		}
		res.FreshGo = &fg
	}
	after, err := srv.Requests()
	if err != nil {
		return res, fmt.Errorf("remote bench: %w", err)
	}
	res.WarmPuts = countWrites(after[len(before):])

	log.Info("remote bench: no-op builds with the remote configured")
	res.NoOp, err = TimeCommand(ctx, "go run mage.go build, no-op, remote configured", b, cleanEnv(warmEnv),
		[]string{"go", "run", "mage.go", "build"}, 0, noOps, MageNoOpTarget)
	if err != nil {
		return res, fmt.Errorf("remote bench: %w", err)
	}
	final, err := srv.WaitRequests(len(after)+1, 200*time.Millisecond) // room for a late log line
	if err != nil {
		return res, fmt.Errorf("remote bench: %w", err)
	}
	res.NoOpRequests = len(final) - len(after)
	return res, nil
}

// cloneBuild clones repo into dir and times `go run mage.go build` there
// with env, reading the kernel counts from its summary line.
func cloneBuild(ctx context.Context, repo, dir, name string, env []string) (CloneBuild, error) {
	cb := CloneBuild{Name: name}
	var out bytes.Buffer
	clone := exec.CommandContext(ctx, "git", "clone", "--quiet", "--no-hardlinks", repo, dir)
	clone.Stdout, clone.Stderr = &out, &out
	if err := clone.Run(); err != nil {
		return cb, fmt.Errorf("remote bench: git clone %s: %w\n%s", repo, err, out.Bytes())
	}
	out.Reset()
	cmd := exec.CommandContext(ctx, "go", "run", "mage.go", "build")
	cmd.Dir, cmd.Env = dir, cleanEnv(env)
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	cb.Wall = time.Since(start)
	if err != nil {
		return cb, fmt.Errorf("remote bench: %s: go run mage.go build: %w\n%s", name, err, out.Bytes())
	}
	if err := cb.parseSummary(out.String()); err != nil {
		return cb, fmt.Errorf("remote bench: %s: %w\n%s", name, err, out.Bytes())
	}
	return cb, nil
}

var reSummary = regexp.MustCompile(`kernels: (\d+) units, (\d+) hits \((\d+) remote\), (\d+) nvcc runs, (\d+) uploaded`)

// parseSummary reads the kernels target's summary line.
func (cb *CloneBuild) parseSummary(out string) error {
	m := reSummary.FindStringSubmatch(out)
	if m == nil {
		return fmt.Errorf("no kernels summary line in the output")
	}
	n := make([]int, 5)
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1]) // the pattern admits digits only
	}
	cb.Units, cb.Hits, cb.Fetched, cb.Compiles, cb.Uploaded = n[0], n[1], n[2], n[3], n[4]
	return nil
}

// cleanEnv is this process's environment without any CUZK_ variable or
// earlier setting of a name in extra, plus extra.
func cleanEnv(extra []string) []string {
	set := map[string]bool{}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !set[k] && !strings.HasPrefix(k, "CUZK_") {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// PathWithout returns path with every directory that holds name replaced
// by a directory under tmp of links to everything else in it: the same
// commands, minus one.
func PathWithout(path, name, tmp string) (string, error) {
	var dirs []string
	for i, dir := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			dirs = append(dirs, dir)
			continue
		}
		shadow := filepath.Join(tmp, strconv.Itoa(i))
		if err := os.MkdirAll(shadow, 0o755); err != nil {
			return "", fmt.Errorf("path without %s: %w", name, err)
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return "", fmt.Errorf("path without %s: %w", name, err)
		}
		for _, e := range ents {
			if e.Name() == name {
				continue
			}
			if err := os.Symlink(filepath.Join(dir, e.Name()), filepath.Join(shadow, e.Name())); err != nil {
				return "", fmt.Errorf("path without %s: %w", name, err)
			}
		}
		dirs = append(dirs, shadow)
	}
	return strings.Join(dirs, string(filepath.ListSeparator)), nil
}

func countWrites(reqs []nginx.Request) int {
	n := 0
	for _, r := range reqs {
		if r.Method != "GET" && r.Method != "HEAD" {
			n++
		}
	}
	return n
}

// sameDir reports whether two directories hold the same files with the
// same bytes.
func sameDir(x, y string) (bool, error) {
	read := func(dir string) (map[string][]byte, error) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("remote bench: %w", err)
		}
		m := map[string][]byte{}
		for _, e := range ents {
			if m[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
				return nil, fmt.Errorf("remote bench: %w", err)
			}
		}
		return m, nil
	}
	a, err := read(x)
	if err != nil {
		return false, err
	}
	b, err := read(y)
	if err != nil {
		return false, err
	}
	if len(a) != len(b) || len(a) == 0 {
		return false, nil
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false, nil
		}
	}
	return true, nil
}
