package assembly

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/daemon/server"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

// Config is a daemon's settings, decoded by the main from its config file,
// CUZK_DAEMON_* variables and flags: the mapstructure names are the config
// keys, the flags are made from the same fields (internal/structflag) with
// the help tags as their usage, and byte sizes take units (64GiB).
type Config struct {
	Listen     string `mapstructure:"listen" help:"gRPC address: unix:PATH or host:port"`                              // unix:PATH or host:port
	HTTPListen string `mapstructure:"http_listen" help:"HTTP address for /metrics, /healthz, /readyz (\"\" disables)"` // /metrics, /healthz, /readyz; "" disables
	// HTTPPublic serves /metrics, /healthz and /readyz to anyone who can
	// reach http_listen, without the token: needed for a non-loopback
	// http_listen with no token; with a token, HTTP asks for it otherwise
	// (on /metrics: the probes' /healthz and /readyz never need it).
	HTTPPublic      bool        `mapstructure:"http_public" help:"serve /metrics, /healthz, /readyz to anyone, without the token (needed off loopback with no token)"`
	Token           string      `mapstructure:"token" help:"bearer token clients must send (required off loopback; HTTP asks for it on /metrics, not on the probes /healthz and /readyz)"` // bearer token; required off loopback
	TokenFile       string      `mapstructure:"token_file" help:"file holding the bearer token"`                                                                                           // file holding the token (instead of token)
	TLSCert         string      `mapstructure:"tls_cert" help:"TLS certificate file"`
	TLSKey          string      `mapstructure:"tls_key" help:"TLS key file"`
	MaxMessageBytes stats.Bytes `mapstructure:"max_message_bytes" help:"gRPC message limit (bytes; units as in 256MiB)"`
	Backend         string      `mapstructure:"backend" help:"auto (GPUs, else CPU), gpu or cpu"`               // auto | gpu | cpu
	GPUs            []int       `mapstructure:"gpus" help:"GPU ordinals to use, comma separated (default all)"` // ordinals; empty: all
	KeyDir          string      `mapstructure:"key_dir" help:"key directory"`
	DevKeySeed      uint64      `mapstructure:"dev_key_seed" help:"seed of development key setups"`
	NoDevKeys       bool        `mapstructure:"no_dev_keys" help:"refuse development keys: only key files in key-dir"`
	// DevKeysInMemory keeps generated development keys in memory only.
	DevKeysInMemory bool `mapstructure:"dev_keys_in_memory" help:"keep generated development keys in memory only (write no key files)"`
	// ReleaseHostKeys gives a key's host memory back once its GPU holds it
	// (one GPU only): see keys.Config.ReleaseHostCopy.
	ReleaseHostKeys bool        `mapstructure:"release_host_keys" help:"with one GPU, give a key's host memory back once the GPU holds it"`
	HostKeyBudget   stats.Bytes `mapstructure:"host_key_budget" help:"bytes of warm keys, as in 64GiB (0: host-budget)"` // bytes; 0: host_budget
	// KeyDirBudget bounds the bytes of key files in key_dir (0: none): the
	// least recently used development keys' files are deleted past it.
	KeyDirBudget stats.Bytes `mapstructure:"key_dir_budget" help:"bytes of key files in key-dir; least recently used development keys are deleted past it (0: no bound)"`
	GPUKeyBudget stats.Bytes `mapstructure:"gpu_key_budget" help:"bytes of hot keys per GPU (0: no bound)"` // bytes per GPU; 0: none
	// GPUMemoryLimit caps the device memory the prover holds on each GPU
	// (gpu.WithMemoryLimit): keys, MSM scratch, quotient vectors. A key
	// that does not fit beside a proof's working memory is planned in
	// chunks, its bases partly streamed from host memory. It leaves the
	// rest of the GPU to other programs (a WinningPoSt prover, say).
	GPUMemoryLimit stats.Bytes `mapstructure:"gpu_memory_limit" help:"device memory the prover may hold on each GPU, as in 24GiB; keys that do not fit stream from host memory (0: all the GPU has)"`
	// GPUBatch is the most proofs of one key a GPU proves together where
	// its plan streams bases from host memory (device.GPU.SetBatch): each
	// chunk of bases then crosses the link once for the batch.
	GPUBatch      int         `mapstructure:"gpu_batch" help:"proofs of one key a GPU proves together where its plan streams bases, sharing each chunk's upload (0: the default, 1: one at a time; 2 shares each streamed chunk between two)"`
	HostJobBudget stats.Bytes `mapstructure:"host_job_budget" help:"bytes of synthesized jobs in flight (0: host-budget)"` // bytes of synthesized jobs; 0: none
	QueueSize     int         `mapstructure:"queue_size" help:"queued jobs before ResourceExhausted"`
	Synthesizers  int         `mapstructure:"synthesizers" help:"jobs synthesized at once (0: one per core)"` // 0: one per core
	// SynthesisWorkers is the goroutines of one synthesis (0: decided per
	// solve, engine.Config.SynthesisWorkers).
	SynthesisWorkers int           `mapstructure:"synthesis_workers" help:"goroutines per synthesis (0: cores / solves running, halved while a device streams the job's key)"`
	Handoff          int           `mapstructure:"handoff" help:"synthesized jobs waiting for a device (0: two per device)"`
	DrainTimeout     time.Duration `mapstructure:"drain_timeout" help:"how long SIGTERM lets running jobs finish"`
	// HostBudget bounds what one request may need of host memory at its
	// peak (its key with its compile, or with one partition's vectors);
	// an unset key or job budget is this. 0: derived from the machine (the
	// cgroup's memory limit, else MemTotal, less a margin).
	HostBudget stats.Bytes `mapstructure:"host_budget" help:"bytes one request may need at its peak; the key and job budgets' default (0: the machine's memory less a margin)"`
	// MemoryLimit is the Go runtime's soft memory limit in bytes
	// (runtime/debug.SetMemoryLimit). 0: GOMEMLIMIT when it is set, else
	// the host budget. Without a limit the collector lets the heap grow to
	// twice what is live, which the vectors of large jobs make unaffordable.
	MemoryLimit stats.Bytes `mapstructure:"memory_limit" help:"Go soft memory limit in bytes (0: GOMEMLIMIT, else the host budget)"`
}

// MinMemoryLimit is the smallest memory_limit a daemon takes: below it the
// Go collector would run without pause and the daemon serve nothing.
const MinMemoryLimit = 64 << 20

// MinGPUMemoryLimit is the smallest gpu_memory_limit Check accepts: the
// free memory the prover's allocations leave for the driver (prover/gpu's
// headroom).
const MinGPUMemoryLimit = 256 << 20

// Check refuses settings no daemon can serve with, each refusal naming the
// key and the value: negative sizes and counts, a message limit outside
// server.MinMessageBytes..server.MaxMessageBytes (the smallest one must
// carry every circuit's request), a memory limit below MinMemoryLimit, a
// drain timeout that is not positive, a queue of no jobs. Start calls it.
func (c Config) Check() error {
	var errs []error
	bad := func(key string, v any, why string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %v: %s", key, v, fmt.Sprintf(why, args...)))
	}
	sizes := []struct {
		key string
		v   stats.Bytes
	}{{"max_message_bytes", c.MaxMessageBytes}, {"host_budget", c.HostBudget}, {"host_key_budget", c.HostKeyBudget},
		{"host_job_budget", c.HostJobBudget}, {"gpu_key_budget", c.GPUKeyBudget}, {"key_dir_budget", c.KeyDirBudget},
		{"memory_limit", c.MemoryLimit}, {"gpu_memory_limit", c.GPUMemoryLimit}}
	for _, s := range sizes {
		if s.v < 0 {
			bad(s.key, int64(s.v), "negative")
		}
	}
	switch m := int64(c.MaxMessageBytes); {
	case m < server.MinMessageBytes:
		bad("max_message_bytes", sizeText(m), "below the floor of %s: a request (its input and %s of other fields) and a verifying key's reply must fit",
			stats.FormatBytes(server.MinMessageBytes), stats.FormatBytes(server.RequestOverheadBytes))
	case m > server.MaxMessageBytes:
		bad("max_message_bytes", sizeText(m), "above the ceiling of %s (a protobuf message is under 2 GiB)", sizeText(server.MaxMessageBytes))
	}
	if c.MemoryLimit > 0 && c.MemoryLimit < MinMemoryLimit {
		bad("memory_limit", sizeText(int64(c.MemoryLimit)), "below the floor of %s (0: GOMEMLIMIT, else the host budget)", stats.FormatBytes(MinMemoryLimit))
	}
	if c.GPUMemoryLimit > 0 && c.GPUMemoryLimit < MinGPUMemoryLimit {
		bad("gpu_memory_limit", sizeText(int64(c.GPUMemoryLimit)), "below the floor of %s: the driver keeps that much free beside the prover (0: all the GPU has)",
			stats.FormatBytes(MinGPUMemoryLimit))
	}
	if c.DrainTimeout <= 0 {
		bad("drain_timeout", c.DrainTimeout, "must be positive: it is how long the first SIGTERM lets running jobs finish (as in 10m)")
	}
	if c.QueueSize < 1 {
		bad("queue_size", c.QueueSize, "at least 1")
	}
	for _, n := range []struct {
		key string
		v   int
	}{{"synthesizers", c.Synthesizers}, {"synthesis_workers", c.SynthesisWorkers}, {"handoff", c.Handoff}, {"gpu_batch", c.GPUBatch}} {
		if n.v < 0 {
			bad(n.key, n.v, "negative (0: the default)")
		}
	}
	for _, g := range c.GPUs {
		if g < 0 {
			bad("gpus", g, "a GPU ordinal is at least 0")
		}
	}
	switch c.Backend {
	case "auto", "gpu", "cpu", "":
	default:
		bad("backend", fmt.Sprintf("%q", c.Backend), "is not auto, gpu or cpu")
	}
	return errors.Join(errs...)
}

// sizeText writes a size exactly and readably: "32768 bytes (32.0 KiB)".
func sizeText(b int64) string {
	if b < stats.KiB && b > -stats.KiB {
		return fmt.Sprintf("%d bytes", b)
	}
	return fmt.Sprintf("%d bytes (%s)", b, stats.FormatBytes(b))
}

// machineWarnings names the settings above the machine's memory: the
// budgets b (a key or job budget left unset is the host budget, and named
// as well) and memory_limit. A machine may grow or swap may serve, so
// they are allowed, but never silently.
func machineWarnings(b Budgets, memoryLimit int64, m Machine) []string {
	if m.Bytes <= 0 {
		return nil
	}
	var out []string
	for _, s := range []struct {
		key string
		v   int64
	}{{"host_budget", b.Host}, {"host_key_budget", b.Key}, {"host_job_budget", b.Job}, {"memory_limit", memoryLimit}} {
		if s.v > m.Bytes {
			out = append(out, fmt.Sprintf("%s: %s is above the machine's memory, %s (%s)", s.key, sizeText(s.v), sizeText(m.Bytes), m.Source))
		}
	}
	return out
}

// memoryLimit is the soft limit Start sets (0: none, GOMEMLIMIT was read
// by the runtime): memory_limit when set, else the host budget.
func memoryLimit(opts Config, host int64, gomemlimitSet bool) int64 {
	switch {
	case opts.MemoryLimit > 0:
		return int64(opts.MemoryLimit)
	case gomemlimitSet:
		return 0
	}
	return host
}

// Budgets are the host budgets the daemon runs with.
type Budgets struct {
	Host, Key, Job int64
	Derived        string // what was derived, and from what ("" : all configured)
}

// budgetsOf completes opts' budgets from the machine: host_budget, when
// not set, is the machine's memory less a margin (Machine.Budget); a key or
// job budget not set is the host budget. Each is then bounded by the host;
// their sum only through admission (every request's peak fits the host
// budget) and the Go memory limit: set both for a joint bound. (Shares of
// the host would have refused what fits: a 2^27 key is estimated at 72 GiB,
// three fifths of a 128 GiB host's budget is 69.)
func budgetsOf(opts Config, m Machine) (Budgets, error) {
	for key, v := range map[string]stats.Bytes{"host_budget": opts.HostBudget, "host_key_budget": opts.HostKeyBudget, "host_job_budget": opts.HostJobBudget} {
		if v < 0 {
			return Budgets{}, fmt.Errorf("%s: %d: negative", key, v)
		}
	}
	b := Budgets{Host: int64(opts.HostBudget), Key: int64(opts.HostKeyBudget), Job: int64(opts.HostJobBudget)}
	var derived []string
	if b.Host == 0 {
		b.Host = m.Budget()
		derived = append(derived, fmt.Sprintf("host_budget from %s (%d bytes) less a margin", m.Source, m.Bytes))
	}
	if b.Key == 0 {
		b.Key = b.Host
		derived = append(derived, "host_key_budget = host_budget")
	}
	if b.Job == 0 {
		b.Job = b.Host
		derived = append(derived, "host_job_budget = host_budget")
	}
	b.Derived = strings.Join(derived, "; ")
	return b, nil
}

// DefaultConfig is the configuration of a daemon given none.
func DefaultConfig() Config {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir() // no home directory: keys per machine still
	}
	return Config{Listen: "127.0.0.1:9820", HTTPListen: "127.0.0.1:9821", MaxMessageBytes: server.DefaultMaxMessageBytes,
		Backend: "auto", KeyDir: dir + "/cuzk/keys", DevKeySeed: 1, QueueSize: 1024, DrainTimeout: 10 * time.Minute}
}

// tokenOf is the bearer token: token, or the contents of token_file.
func tokenOf(o Config) (string, error) {
	if o.TokenFile == "" {
		return o.Token, nil
	}
	if o.Token != "" {
		return "", errors.New("token and token_file are both set: choose one")
	}
	b, err := os.ReadFile(o.TokenFile)
	if err != nil {
		return "", fmt.Errorf("token_file: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("token_file %s is empty", o.TokenFile)
	}
	return t, nil
}
