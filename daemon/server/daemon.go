package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/cuda/driver"
	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/engine"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/internal/buildinfo"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// Options are the daemon's settings, decoded by the main from its config
// file, CUZK_DAEMON_* variables and flags (the mapstructure names are the
// config keys).
type Options struct {
	Listen     string `mapstructure:"listen"`      // unix:PATH or host:port
	HTTPListen string `mapstructure:"http_listen"` // /metrics, /healthz, /readyz; "" disables
	// HTTPPublic serves /metrics, /healthz and /readyz to anyone who can
	// reach http_listen, without the token: needed for a non-loopback
	// http_listen with no token; with a token, HTTP asks for it otherwise
	// (on /metrics: the probes' /healthz and /readyz never need it).
	HTTPPublic      bool   `mapstructure:"http_public"`
	Token           string `mapstructure:"token"`      // bearer token; required off loopback
	TokenFile       string `mapstructure:"token_file"` // file holding the token (instead of token)
	TLSCert         string `mapstructure:"tls_cert"`
	TLSKey          string `mapstructure:"tls_key"`
	MaxMessageBytes int    `mapstructure:"max_message_bytes"`
	Backend         string `mapstructure:"backend"` // auto | gpu | cpu
	GPUs            []int  `mapstructure:"gpus"`    // ordinals; empty: all
	KeyDir          string `mapstructure:"key_dir"`
	DevKeySeed      uint64 `mapstructure:"dev_key_seed"`
	NoDevKeys       bool   `mapstructure:"no_dev_keys"`
	// DevKeysInMemory keeps generated development keys in memory only.
	DevKeysInMemory bool `mapstructure:"dev_keys_in_memory"`
	// ReleaseHostKeys gives a key's host memory back once its GPU holds it
	// (one GPU only): see keys.Config.ReleaseHostCopy.
	ReleaseHostKeys bool  `mapstructure:"release_host_keys"`
	HostKeyBudget   int64 `mapstructure:"host_key_budget"` // bytes; 0: host_budget
	// KeyDirBudget bounds the bytes of key files in key_dir (0: none): the
	// least recently used development keys' files are deleted past it.
	KeyDirBudget  int64 `mapstructure:"key_dir_budget"`
	GPUKeyBudget  int64 `mapstructure:"gpu_key_budget"`  // bytes per GPU; 0: none
	HostJobBudget int64 `mapstructure:"host_job_budget"` // bytes of synthesized jobs; 0: none
	QueueSize     int   `mapstructure:"queue_size"`
	Synthesizers  int   `mapstructure:"synthesizers"` // 0: one per core
	// SynthesisWorkers is the goroutines of one synthesis (0: cores / synthesizers).
	SynthesisWorkers int           `mapstructure:"synthesis_workers"`
	Handoff          int           `mapstructure:"handoff"`
	DrainTimeout     time.Duration `mapstructure:"drain_timeout"`
	// HostBudget bounds what one request may need of host memory at its
	// peak (its key with its compile, or with one partition's vectors);
	// an unset key or job budget is this. 0: derived from the machine (the
	// cgroup's memory limit, else MemTotal, less a margin).
	HostBudget int64 `mapstructure:"host_budget"`
	// MemoryLimit is the Go runtime's soft memory limit in bytes
	// (runtime/debug.SetMemoryLimit). 0: GOMEMLIMIT when it is set, else
	// the host budget. Without a limit the collector lets the heap grow to
	// twice what is live, which the vectors of large jobs make unaffordable.
	MemoryLimit int64 `mapstructure:"memory_limit"`
}

// memoryLimit is the soft limit Start sets (0: none, GOMEMLIMIT was read
// by the runtime): memory_limit when set, else the host budget.
func memoryLimit(opts Options, host int64, gomemlimitSet bool) int64 {
	switch {
	case opts.MemoryLimit > 0:
		return opts.MemoryLimit
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
func budgetsOf(opts Options, m Machine) (Budgets, error) {
	if opts.HostBudget < 0 || opts.HostKeyBudget < 0 || opts.HostJobBudget < 0 {
		return Budgets{}, errors.New("host_budget, host_key_budget, host_job_budget: negative")
	}
	b := Budgets{Host: opts.HostBudget, Key: opts.HostKeyBudget, Job: opts.HostJobBudget}
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

// DefaultOptions are the settings of a daemon with no configuration.
func DefaultOptions() Options {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir() // no home directory: keys per machine still
	}
	return Options{Listen: "127.0.0.1:9820", HTTPListen: "127.0.0.1:9821", MaxMessageBytes: DefaultMaxMessageBytes,
		Backend: "auto", KeyDir: dir + "/cuzk/keys", DevKeySeed: 1, QueueSize: 1024, DrainTimeout: 10 * time.Minute}
}

// Daemon is a running proving service: devices, keys, engine, the gRPC
// listener and the HTTP listener.
type Daemon struct {
	opts    Options
	log     *slog.Logger
	eng     *engine.Engine
	keys    *keys.Manager
	srv     *Server
	gs      *grpc.Server
	hs      *http.Server
	lis     net.Listener
	hlis    net.Listener
	backend string

	serveErr chan error
	stopOnce sync.Once
}

// Start opens the devices and listeners and starts serving.
func Start(opts Options, log *slog.Logger) (*Daemon, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	token, err := tokenOf(opts)
	if err != nil {
		return nil, err
	}
	if err := CheckExposure(opts.Listen, token); err != nil {
		return nil, err
	}
	if err := checkHTTPExposure(opts.HTTPListen, token, opts.HTTPPublic); err != nil {
		return nil, err
	}
	if opts.HTTPPublic && opts.HTTPListen != "" {
		log.Warn("http_public: /metrics (jobs, timings, queue, keys, process), /healthz and /readyz are open to anyone who can reach http_listen",
			"http_listen", opts.HTTPListen)
	}
	if opts.MemoryLimit < 0 {
		return nil, errors.New("memory_limit: negative")
	}
	machine, err := ReadMachine(os.DirFS("/"))
	if err != nil && opts.HostBudget == 0 {
		return nil, fmt.Errorf("host_budget: not set, and %w", err)
	}
	budgets, err := budgetsOf(opts, machine)
	if err != nil {
		return nil, err
	}
	log.Info("host budgets", "host_bytes", budgets.Host, "key_bytes", budgets.Key, "job_bytes", budgets.Job,
		"derived", budgets.Derived)
	_, envLimit := os.LookupEnv("GOMEMLIMIT")
	if lim := memoryLimit(opts, budgets.Host, envLimit); lim > 0 {
		debug.SetMemoryLimit(lim)
		log.Info("Go memory limit set", "bytes", lim)
	}
	devs, backend, why, infos, err := openDevices(opts, log)
	if err != nil {
		return nil, err
	}
	var fb groth16.FixedBaser // development setups on the first GPU, when there is one
	if g, ok := devs[0].(*engine.GPUDevice); ok {
		fb = g
	}
	km, err := keys.New(keys.Config{Dir: opts.KeyDir, HostBudget: budgets.Key, GPUBudget: opts.GPUKeyBudget, DirBudget: opts.KeyDirBudget,
		DevSeed: opts.DevKeySeed, NoGenerate: opts.NoDevKeys, DevKeysInMemory: opts.DevKeysInMemory, ReleaseHostCopy: opts.ReleaseHostKeys, Log: log, FixedBase: fb})
	if err != nil {
		return nil, closeAll(devs, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		BuildInfoCollector(buildinfo.Get()))
	eng, err := engine.New(engine.Config{Devices: devs, Keys: km, QueueSize: opts.QueueSize, Synthesizers: opts.Synthesizers,
		SynthesisWorkers: opts.SynthesisWorkers,
		Handoff:          opts.Handoff, HostBudget: budgets.Job, HostTotal: budgets.Host, Log: log, Metrics: reg})
	if err != nil {
		return nil, closeAll(devs, err)
	}
	d := &Daemon{opts: opts, log: log, eng: eng, keys: km, backend: backend, serveErr: make(chan error, 2)}
	kinfo := kernelInfo()
	d.srv, err = New(Config{Engine: eng, Keys: km, Token: token, Version: Version(), Backend: backend, CPUWhy: why,
		Devices: infos, Kernels: kinfo, Gatherer: reg, MaxInputBytes: opts.MaxMessageBytes - 64<<10, Log: log,
		Ready: func() error { return ready(backend, kinfo) }})
	if err != nil {
		return nil, errors.Join(err, eng.Close())
	}
	if err := d.listen(); err != nil {
		return nil, errors.Join(err, eng.Close())
	}
	log.Info("cuzk-daemon serving", "addr", d.Addr(), "http", d.HTTPAddr(), "backend", backend, "cpu_reason", why,
		"devices", len(devs), "auth", token != "", "tls", opts.TLSCert != "")
	if backend == "cpu" {
		log.Warn("no GPU: proving on the CPU backend", "reason", why)
	}
	return d, nil
}

func (d *Daemon) listen() error {
	sopts := d.srv.ServerOptions(d.opts.MaxMessageBytes)
	if d.opts.TLSCert != "" || d.opts.TLSKey != "" {
		creds, err := credentials.NewServerTLSFromFile(d.opts.TLSCert, d.opts.TLSKey)
		if err != nil {
			return fmt.Errorf("tls: %w", err)
		}
		sopts = append(sopts, grpc.Creds(creds))
	}
	d.gs = grpc.NewServer(sopts...)
	d.srv.Register(d.gs)
	var err error
	if d.lis, err = Listen(d.opts.Listen); err != nil {
		return err
	}
	if d.opts.HTTPListen != "" {
		if d.hlis, err = Listen(d.opts.HTTPListen); err != nil {
			d.lis.Close()
			return err
		}
		h := d.srv.HTTPHandler()
		if !d.opts.HTTPPublic {
			h = d.srv.httpAuth(h)
		}
		d.hs = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := d.hs.Serve(d.hlis); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.serveErr <- fmt.Errorf("http: %w", err)
			}
		}()
	}
	go func() {
		if err := d.gs.Serve(d.lis); err != nil {
			d.serveErr <- fmt.Errorf("grpc: %w", err)
		}
	}()
	return nil
}

// Addr is the gRPC listener's address (unix:PATH for a socket).
func (d *Daemon) Addr() string { return addrOf(d.lis) }

// HTTPAddr is the HTTP listener's address ("" when off).
func (d *Daemon) HTTPAddr() string {
	if d.hlis == nil {
		return ""
	}
	return addrOf(d.hlis)
}

func addrOf(l net.Listener) string {
	if l.Addr().Network() == "unix" {
		return "unix:" + l.Addr().String()
	}
	return l.Addr().String()
}

// Backend is "gpu" or "cpu".
func (d *Daemon) Backend() string { return d.backend }

// Errors reports a listener that stopped serving on its own.
func (d *Daemon) Errors() <-chan error { return d.serveErr }

// Drain stops taking jobs (health NOT_SERVING, new jobs Unavailable),
// lets running jobs finish until ctx ends, then stops the listeners and
// the engine. It returns the drain's error, if the jobs did not finish.
func (d *Daemon) Drain(ctx context.Context) error {
	d.log.Info("draining: running jobs finish, new jobs are refused")
	d.srv.SetNotServing()
	err := d.eng.Drain(ctx)
	d.Stop()
	return err
}

// Stop cancels every job and closes everything at once.
func (d *Daemon) Stop() {
	d.stopOnce.Do(func() {
		done := make(chan struct{})
		go func() { d.gs.GracefulStop(); close(done) }()
		engErr := d.eng.Close() // ends every job, so waiting RPCs return
		d.keys.Close()          // key loads still running for key RPCs
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			d.gs.Stop()
		}
		if d.hs != nil {
			_ = d.hs.Close() // shutting down: scrapes in flight may be cut
		}
		if engErr != nil {
			d.log.Error("closing devices", "err", engErr)
		}
		if path, ok := unixPath(d.Addr()); ok {
			_ = os.Remove(path) // the socket file; a stale one is replaced at start anyway
		}
		d.log.Info("cuzk-daemon stopped")
	})
}

func tokenOf(o Options) (string, error) {
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

// openDevices opens the backend opts ask for: the GPUs, or the CPU when
// there are none (auto) or when asked (cpu).
func openDevices(o Options, log *slog.Logger) ([]engine.Device, string, string, map[string]DeviceInfo, error) {
	infos := map[string]DeviceInfo{}
	cpuDev := func(why string) ([]engine.Device, string, string, map[string]DeviceInfo, error) {
		d, err := engine.NewCPUDevice("cpu")
		if err != nil {
			return nil, "", "", nil, err
		}
		infos[d.Name()] = DeviceInfo{Ordinal: -1}
		return []engine.Device{d}, "cpu", why, infos, nil
	}
	switch o.Backend {
	case "cpu":
		return cpuDev("backend: cpu in the configuration")
	case "gpu", "auto", "":
	default:
		return nil, "", "", nil, fmt.Errorf("backend: %q is not auto, gpu or cpu", o.Backend)
	}
	if _, err := cuda.Embedded(); err != nil {
		if o.Backend == "gpu" {
			return nil, "", "", nil, fmt.Errorf("backend gpu: %w", err)
		}
		return cpuDev(err.Error())
	}
	var ords []int
	if len(o.GPUs) > 0 {
		ords = o.GPUs
	}
	gpus, err := engine.OpenGPUs(ords)
	if err != nil {
		if o.Backend == "auto" && errors.Is(err, driver.ErrNoGPU) {
			return cpuDev(err.Error())
		}
		return nil, "", "", nil, fmt.Errorf("open GPUs: %w", err)
	}
	var devs []engine.Device
	for _, g := range gpus {
		devs = append(devs, g)
		infos[g.Name()] = DeviceInfo{Ordinal: g.Info().Ordinal, MemoryBytes: g.Info().TotalMemory, Held: g.MemoryHeld}
		log.Info("gpu", "device", g.Info().String())
	}
	return devs, "gpu", "", infos, nil
}

func closeAll(devs []engine.Device, err error) error {
	for _, d := range devs {
		err = errors.Join(err, d.Close())
	}
	return err
}

func ready(backend string, k *KernelInfo) error {
	if backend == "gpu" && k == nil {
		return errors.New("no kernels embedded")
	}
	return nil
}

// kernelInfo reads the embedded manifest; nil when there is none.
func kernelInfo() *KernelInfo {
	m, err := cuda.Embedded()
	if err != nil {
		return nil
	}
	k := &KernelInfo{Pins: &pb.KernelPins{NvccBuild: m.NvccBuild, Toolchain: m.Toolchain, Image: m.Image, Archs: m.Archs}}
	for _, x := range m.Kernels {
		k.Kernels = append(k.Kernels, &pb.Kernel{Name: x.Name, ActionId: x.ActionID, ClosureHash: x.ClosureHash,
			FatbinSha256: x.FatbinSHA256, Size: x.Size})
	}
	return k
}

// Version is this binary's version, commit and Go release, as GetStatus
// reports them (buildinfo.Info.String).
func Version() string { return buildinfo.Get().String() }
