package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/engine"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// Config configures a Server.
type Config struct {
	Engine   *engine.Engine     // required
	Keys     *keys.Manager      // required
	Registry *registry.Registry // default registry.Default()
	Token    string             // bearer token; "" means no authentication
	Version  string             // reported by GetStatus
	Backend  string             // "gpu" or "cpu"
	CPUWhy   string             // why there is no GPU, when Backend is "cpu"
	Devices  map[string]DeviceInfo
	Kernels  *KernelInfo         // nil: none embedded
	Gatherer prometheus.Gatherer // for GetMetrics and /metrics
	// MaxInputBytes bounds a request's input (default 256 MiB − 64 KiB).
	MaxInputBytes int
	Log           *slog.Logger
	// Ready reports whether the daemon can prove (GPUs found, kernels
	// loaded); nil means always.
	Ready func() error
}

// DeviceInfo is what the engine does not know of a device.
type DeviceInfo struct {
	Ordinal     int
	MemoryBytes int64
	// Held reports the device memory the prover holds now and at most
	// (nil: not tracked, as on the CPU).
	Held func() (now, peak int64)
	// MemoryLimit is the device memory the prover may hold (0: no limit
	// beyond the device's).
	MemoryLimit int64
}

// KernelInfo is the embedded kernel manifest as reported.
type KernelInfo struct {
	Pins    *pb.KernelPins
	Kernels []*pb.Kernel
}

// Server implements cuzkv1.ProvingEngineServer. It is safe for concurrent
// use.
type Server struct {
	pb.UnimplementedProvingEngineServer
	cfg    Config
	health *health.Server
	start  time.Time
}

// New returns a Server over cfg.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil || cfg.Keys == nil {
		return nil, errors.New("server: engine and keys are required")
	}
	if cfg.Registry == nil {
		cfg.Registry = registry.Default()
	}
	if cfg.MaxInputBytes == 0 {
		cfg.MaxInputBytes = MaxInputBytes(DefaultMaxMessageBytes)
	}
	if cfg.MaxInputBytes < 0 {
		return nil, fmt.Errorf("server: input limit %d bytes: negative", cfg.MaxInputBytes)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Gatherer == nil {
		cfg.Gatherer = prometheus.NewRegistry()
	}
	return &Server{cfg: cfg, health: health.NewServer(), start: time.Now()}, nil
}

// Message limits: the default gRPC message limit, the part of it a
// request's fields other than its input may take, and the smallest and
// largest limits a daemon accepts. The floor carries the largest request
// of every registered circuit (sha256's 64 KiB input and the 64 KiB kept
// for the rest) and a verifying key's reply (96 bytes a public input) with
// room to spare; the ceiling is protobuf's: no message may reach 2 GiB.
const (
	DefaultMaxMessageBytes = 256 << 20
	RequestOverheadBytes   = 64 << 10
	MinMessageBytes        = 1 << 20
	MaxMessageBytes        = 2<<30 - 1
)

// MaxInputBytes is the largest input a request may carry under the
// message limit maxMessage.
func MaxInputBytes(maxMessage int) int { return maxMessage - RequestOverheadBytes }

// Register adds the proving service, health and reflection to gs and
// marks the service SERVING.
func (s *Server) Register(gs *grpc.Server) {
	pb.RegisterProvingEngineServer(gs, s)
	healthpb.RegisterHealthServer(gs, s.health)
	reflection.Register(gs)
	s.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	s.health.SetServingStatus(pb.ProvingEngine_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
}

// SetNotServing marks the proving service NOT_SERVING (a drain has
// begun). The overall health ("") stays SERVING while the process runs, so
// clients can still await the jobs it is finishing; new jobs get
// Unavailable, which daemon/client retries on another daemon.
func (s *Server) SetNotServing() {
	s.health.SetServingStatus(pb.ProvingEngine_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_NOT_SERVING)
}

// ServerOptions returns the interceptors and limits the service needs:
// authentication (when a token is set) and the message size limit.
func (s *Server) ServerOptions(maxMessage int) []grpc.ServerOption {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessageBytes
	}
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage)}
	if s.cfg.Token != "" {
		a := authenticator{token: s.cfg.Token}
		opts = append(opts, grpc.ChainUnaryInterceptor(a.unary), grpc.ChainStreamInterceptor(a.stream))
	}
	return opts
}

// statusOf maps an engine or registry error to a gRPC status, its message
// clipped (clipMessage).
func statusOf(err error) error {
	if err == nil {
		return nil
	}
	return status.Error(codeOf(err), clipMessage(err.Error()))
}

func codeOf(err error) codes.Code {
	switch {
	case errors.Is(err, registry.ErrInvalid):
		return codes.InvalidArgument
	case errors.Is(err, engine.ErrQueueFull), errors.Is(err, engine.ErrNeverFits), errors.Is(err, keys.ErrTooLarge):
		return codes.ResourceExhausted
	case errors.Is(err, engine.ErrDraining), errors.Is(err, engine.ErrShutdown), errors.Is(err, keys.ErrKeyGone):
		return codes.Unavailable
	case errors.Is(err, engine.ErrUnknownJob):
		return codes.NotFound
	case errors.Is(err, engine.ErrRequestConflict):
		return codes.AlreadyExists
	case errors.Is(err, context.Canceled):
		return codes.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		return codes.DeadlineExceeded
	}
	return codes.Internal
}

func invalid(format string, args ...any) error {
	return status.Error(codes.InvalidArgument, clipMessage(fmt.Sprintf(format, args...)))
}

// maxMessageText bounds an error's message: a caller's long value named
// in it is cut, so that no reply grows with what the caller sent (a 32 MiB
// circuit id echoed whole broke the reply's header block, and the caller
// saw a transport error, which clients retry).
const maxMessageText = 2048

// clipMessage cuts msg to maxMessageText bytes (on a rune boundary),
// saying how long it was.
func clipMessage(msg string) string {
	if len(msg) <= maxMessageText {
		return msg
	}
	cut := maxMessageText
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes clipped)", msg[:cut], len(msg)-cut)
}

// fmtErr is fmt.Errorf, named for the handlers' wrapping.
var fmtErr = fmt.Errorf
