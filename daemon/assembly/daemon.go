package assembly

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/cuzk-dev/cuzk/cuda"
	"github.com/cuzk-dev/cuzk/cuda/driver"
	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/device"
	"github.com/cuzk-dev/cuzk/daemon/engine"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/daemon/server"
	"github.com/cuzk-dev/cuzk/internal/buildinfo"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/gpu"
	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// Daemon is a running proving service: devices, keys, engine, the gRPC
// listener and the HTTP listener.
type Daemon struct {
	cfg     Config
	log     *slog.Logger
	eng     *engine.Engine
	keys    *keys.Manager
	srv     *server.Server
	gs      *grpc.Server
	hs      *http.Server
	lis     net.Listener
	hlis    net.Listener
	backend string

	serveErr chan error
	stopOnce sync.Once
}

// Start assembles a daemon from cfg and starts serving: it checks what the
// listeners would expose, derives the host budgets from the machine, sets
// the Go memory limit (process-wide), opens the devices, and starts the key
// manager, the engine, the gRPC service and the HTTP endpoints.
func Start(cfg Config, log *slog.Logger) (*Daemon, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	token, err := tokenOf(cfg)
	if err != nil {
		return nil, err
	}
	if err := server.CheckExposure(cfg.Listen, token); err != nil {
		return nil, err
	}
	if err := server.CheckHTTPExposure(cfg.HTTPListen, token, cfg.HTTPPublic); err != nil {
		return nil, err
	}
	if cfg.HTTPPublic && cfg.HTTPListen != "" {
		log.Warn("http_public: /metrics (jobs, timings, queue, keys, process), /healthz and /readyz are open to anyone who can reach http_listen",
			"http_listen", cfg.HTTPListen)
	}
	machine, err := ReadMachine(os.DirFS("/"))
	if err != nil && cfg.HostBudget == 0 {
		return nil, fmt.Errorf("host_budget: not set, and %w", err)
	}
	budgets, err := budgetsOf(cfg, machine)
	if err != nil {
		return nil, err
	}
	for _, w := range machineWarnings(budgets, int64(cfg.MemoryLimit), machine) {
		log.Warn(w)
	}
	log.Info("host budgets", "host_bytes", budgets.Host, "key_bytes", budgets.Key, "job_bytes", budgets.Job,
		"derived", budgets.Derived)
	_, envLimit := os.LookupEnv("GOMEMLIMIT")
	if lim := memoryLimit(cfg, budgets.Host, envLimit); lim > 0 {
		debug.SetMemoryLimit(lim)
		log.Info("Go memory limit set", "bytes", lim)
	}
	devs, backend, why, infos, err := openDevices(cfg, log)
	if err != nil {
		return nil, err
	}
	var fb groth16.FixedBaser // development setups on the first GPU, when there is one
	if g, ok := devs[0].(*device.GPU); ok {
		fb = g
	}
	var gcPercent func(int) int // the key manager tunes GOGC to the keys in the heap, unless the operator set it
	if _, set := os.LookupEnv("GOGC"); !set {
		gcPercent = debug.SetGCPercent
	}
	km, err := keys.New(keys.Config{Dir: cfg.KeyDir, HostBudget: budgets.Key, GPUBudget: int64(cfg.GPUKeyBudget), DirBudget: int64(cfg.KeyDirBudget),
		DevSeed: cfg.DevKeySeed, NoGenerate: cfg.NoDevKeys, DevKeysInMemory: cfg.DevKeysInMemory, ReleaseHostCopy: cfg.ReleaseHostKeys, Log: log, FixedBase: fb,
		GCPercent: gcPercent})
	if err != nil {
		return nil, closeAll(devs, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		server.BuildInfoCollector(buildinfo.Get()))
	eng, err := engine.New(engine.Config{Devices: devs, Keys: km, QueueSize: cfg.QueueSize, Synthesizers: cfg.Synthesizers,
		SynthesisWorkers: cfg.SynthesisWorkers,
		Handoff:          cfg.Handoff, HostBudget: budgets.Job, HostTotal: budgets.Host, Log: log, Metrics: reg,
		Vectors: device.NewVectorPool(devs, log)})
	if err != nil {
		return nil, closeAll(devs, err)
	}
	d := &Daemon{cfg: cfg, log: log, eng: eng, keys: km, backend: backend, serveErr: make(chan error, 2)}
	kinfo := kernelInfo()
	d.srv, err = server.New(server.Config{Engine: eng, Keys: km, Token: token, Version: buildinfo.Get().String(), Backend: backend, CPUWhy: why,
		Devices: infos, Kernels: kinfo, Gatherer: reg, MaxInputBytes: server.MaxInputBytes(int(cfg.MaxMessageBytes)), Log: log,
		Ready: func() error { return ready(backend, kinfo) }})
	if err != nil {
		return nil, errors.Join(err, eng.Close())
	}
	if err := d.listen(); err != nil {
		return nil, errors.Join(err, eng.Close())
	}
	log.Info("cuzk-daemon serving", "addr", d.Addr(), "http", d.HTTPAddr(), "backend", backend, "cpu_reason", why,
		"devices", len(devs), "auth", token != "", "tls", cfg.TLSCert != "")
	if backend == "cpu" {
		log.Warn("no GPU: proving on the CPU backend", "reason", why)
		for _, k := range gpuSettings(cfg) {
			log.Warn(k+" is set but has no effect: no GPU proves here", "setting", k, "reason", why)
		}
	}
	return d, nil
}

// gpuSettings names the settings of cfg that apply to GPUs only and are
// set (not their zero default), so that a daemon proving on the CPU says
// they take no effect.
func gpuSettings(cfg Config) []string {
	var set []string
	for _, s := range []struct {
		key string
		on  bool
	}{{"gpu_memory_limit", cfg.GPUMemoryLimit != 0}, {"gpu_key_budget", cfg.GPUKeyBudget != 0}, {"gpu_batch", cfg.GPUBatch != 0}} {
		if s.on {
			set = append(set, s.key)
		}
	}
	return set
}

func (d *Daemon) listen() error {
	sopts := d.srv.ServerOptions(int(d.cfg.MaxMessageBytes))
	if d.cfg.TLSCert != "" || d.cfg.TLSKey != "" {
		creds, err := credentials.NewServerTLSFromFile(d.cfg.TLSCert, d.cfg.TLSKey)
		if err != nil {
			return fmt.Errorf("tls: %w", err)
		}
		sopts = append(sopts, grpc.Creds(creds))
	}
	d.gs = grpc.NewServer(sopts...)
	d.srv.Register(d.gs)
	var err error
	if d.lis, err = server.Listen(d.cfg.Listen); err != nil {
		return err
	}
	if d.cfg.HTTPListen != "" {
		if d.hlis, err = server.Listen(d.cfg.HTTPListen); err != nil {
			d.lis.Close()
			return err
		}
		h := d.srv.HTTPHandler()
		if !d.cfg.HTTPPublic {
			h = d.srv.HTTPAuth(h)
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
func (d *Daemon) Addr() string { return server.Addr(d.lis) }

// HTTPAddr is the HTTP listener's address ("" when off).
func (d *Daemon) HTTPAddr() string {
	if d.hlis == nil {
		return ""
	}
	return server.Addr(d.hlis)
}

// Backend is "gpu" or "cpu".
func (d *Daemon) Backend() string { return d.backend }

// Errors reports a listener that stopped serving on its own.
func (d *Daemon) Errors() <-chan error { return d.serveErr }

// Drain stops taking jobs (health NOT_SERVING, new jobs Unavailable),
// lets running jobs finish until ctx ends, then stops the listeners and
// the engine. It returns the drain's error, if the jobs did not finish.
func (d *Daemon) Drain(ctx context.Context) error {
	d.srv.SetNotServing()
	d.eng.StopTaking()
	// Logged once it is true: a client that reads the log may rely on it.
	d.log.Info("draining: running jobs finish, new jobs are refused")
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
		if path, ok := server.UnixPath(d.Addr()); ok {
			_ = os.Remove(path) // the socket file; a stale one is replaced at start anyway
		}
		d.log.Info("cuzk-daemon stopped")
	})
}

// openDevices opens the backend opts ask for: the GPUs, or the CPU when
// there are none (auto) or when asked (cpu).
func openDevices(o Config, log *slog.Logger) ([]engine.Device, string, string, map[string]server.DeviceInfo, error) {
	infos := map[string]server.DeviceInfo{}
	cpuDev := func(why string) ([]engine.Device, string, string, map[string]server.DeviceInfo, error) {
		d, err := device.NewCPU("cpu")
		if err != nil {
			return nil, "", "", nil, err
		}
		infos[d.Name()] = server.DeviceInfo{Ordinal: -1}
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
	gopts := []gpu.Option{gpu.WithLogger(log)}
	if o.GPUMemoryLimit > 0 {
		gopts = append(gopts, gpu.WithMemoryLimit(int64(o.GPUMemoryLimit)))
	}
	gpus, err := device.OpenGPUs(ords, gopts...)
	if err != nil {
		if o.Backend == "auto" && errors.Is(err, driver.ErrNoGPU) {
			return cpuDev(err.Error())
		}
		return nil, "", "", nil, fmt.Errorf("open GPUs: %w", err)
	}
	var devs []engine.Device
	for _, g := range gpus {
		if o.GPUBatch > 0 {
			g.SetBatch(o.GPUBatch)
		}
		devs = append(devs, g)
		infos[g.Name()] = server.DeviceInfo{Ordinal: g.Info().Ordinal, MemoryBytes: g.Info().TotalMemory, Held: g.MemoryHeld,
			MemoryLimit: int64(o.GPUMemoryLimit)}
		log.Info("gpu", "device", g.Info().String(), "memory_limit", o.GPUMemoryLimit.String(),
			"driver_memory", stats.FormatGiB(g.DriverMemory()))
		if lim := int64(o.GPUMemoryLimit); lim > g.Info().TotalMemory {
			log.Warn("gpu_memory_limit is above the device's memory: the device's free memory bounds the prover", "gpu_memory_limit",
				o.GPUMemoryLimit.String(), "device", g.Name(), "device_memory", stats.Bytes(g.Info().TotalMemory).String())
		}
	}
	return devs, "gpu", "", infos, nil
}

// A GPU proves a streamed key's jobs in batches.
var _ engine.BatchProver = (*device.GPU)(nil)

func closeAll(devs []engine.Device, err error) error {
	for _, d := range devs {
		err = errors.Join(err, d.Close())
	}
	return err
}

func ready(backend string, k *server.KernelInfo) error {
	if backend == "gpu" && k == nil {
		return errors.New("no kernels embedded")
	}
	return nil
}

// kernelInfo reads the embedded manifest; nil when there is none.
func kernelInfo() *server.KernelInfo {
	m, err := cuda.Embedded()
	if err != nil {
		return nil
	}
	k := &server.KernelInfo{Pins: &pb.KernelPins{NvccBuild: m.NvccBuild, Toolchain: m.Toolchain, Image: m.Image, Archs: m.Archs}}
	for _, x := range m.Kernels {
		k.Kernels = append(k.Kernels, &pb.Kernel{Name: x.Name, ActionId: x.ActionID, ClosureHash: x.ClosureHash,
			FatbinSha256: x.FatbinSHA256, Size: x.Size})
	}
	return k
}
