package server

import (
	"context"
	"encoding/binary"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/daemon/device"
	"github.com/cuzk-dev/cuzk/daemon/engine"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// hookDevice is the CPU device with a hook before each proof (to hold or
// fail it).
type hookDevice struct {
	*device.CPU
	name   string
	before func(ctx context.Context, asg *r1cs.Assignment) error
}

func (d *hookDevice) Name() string { return d.name }

func (d *hookDevice) Prove(ctx context.Context, pk *groth16.ProvingKey, asg *r1cs.Assignment, rnd io.Reader) (*groth16.Proof, error) {
	if d.before != nil {
		if err := d.before(ctx, asg); err != nil {
			return nil, err
		}
	}
	return d.CPU.Prove(ctx, pk, asg, rnd)
}

func newHookDevice(t *testing.T, name string) *hookDevice {
	cpu, err := device.NewCPU(name)
	require.NoError(t, err)
	return &hookDevice{CPU: cpu, name: name}
}

type testServer struct {
	addr string
	eng  *engine.Engine
	keys *keys.Manager
	srv  *Server
	gs   *grpc.Server
}

type serverOpts struct {
	token   string
	listen  string // "" : 127.0.0.1:0
	engine  engine.Config
	devices []engine.Device
	infos   map[string]DeviceInfo
	keyDir  string
	keys    keys.Config // Dir and DevSeed filled in when empty
	message int         // the gRPC message limit (default 2 MiB)
}

// startServer runs the service on a real listener with the given devices
// (one plain CPU device by default).
func startServer(t *testing.T, o serverOpts) *testServer {
	t.Helper()
	if o.keyDir == "" {
		o.keyDir = t.TempDir()
	}
	kc := o.keys
	kc.Dir = o.keyDir
	if kc.DevSeed == 0 {
		kc.DevSeed = 1
	}
	km, err := keys.New(kc)
	require.NoError(t, err)
	if len(o.devices) == 0 {
		o.devices = []engine.Device{newHookDevice(t, "cpu")}
	}
	reg := prometheus.NewRegistry()
	cfg := o.engine
	cfg.Devices, cfg.Keys, cfg.Metrics = o.devices, km, reg
	eng, err := engine.New(cfg)
	require.NoError(t, err)
	srv, err := New(Config{Engine: eng, Keys: km, Token: o.token, Backend: "cpu", CPUWhy: "test", Gatherer: reg,
		MaxInputBytes: 1 << 20, Devices: o.infos})
	require.NoError(t, err)
	if o.listen == "" {
		o.listen = "127.0.0.1:0"
	}
	lis, err := Listen(o.listen)
	require.NoError(t, err)
	if o.message == 0 {
		o.message = 2 << 20
	}
	gs := grpc.NewServer(srv.ServerOptions(o.message)...)
	srv.Register(gs)
	go func() { _ = gs.Serve(lis) }()
	ts := &testServer{addr: Addr(lis), eng: eng, keys: km, srv: srv, gs: gs}
	t.Cleanup(ts.kill)
	return ts
}

var killOnce sync.Map

// kill stops the server abruptly, as a killed process would: connections
// drop first, then the engine goes.
func (ts *testServer) kill() {
	if _, done := killOnce.LoadOrStore(ts, true); done {
		return
	}
	ts.gs.Stop()
	_ = ts.eng.Close() // the jobs end with the process
	ts.keys.Close()
}

func dial(t *testing.T, token string, addrs ...string) *client.Client {
	t.Helper()
	c, err := client.Dial(addrs, client.Config{Token: token})
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, c.Close()) })
	return c
}

func porepCircuit(constraints uint64) *pb.Circuit {
	return &pb.Circuit{Id: "porep-synth", Params: map[string]uint64{"constraints": constraints}}
}

func resolved(t *testing.T, c *pb.Circuit) *registry.Resolved {
	r, err := registry.Default().Resolve(c.Id, c.Params)
	require.NoError(t, err)
	return r
}

func seed(s uint64) []byte { return binary.LittleEndian.AppendUint64(nil, s) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func dialConn(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecureCreds()))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func insecureCreds() credentials.TransportCredentials { return insecure.NewCredentials() }
