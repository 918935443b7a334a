package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/health" // client-side health checking for the balancer
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
)

// Config configures Dial.
type Config struct {
	Token      string                           // bearer token sent with every call
	TLS        credentials.TransportCredentials // nil: plaintext
	MaxMessage int                              // bytes (default 256 MiB)
}

// Client is a connection to one or more daemons. It is safe for
// concurrent use.
type Client struct {
	pb.ProvingEngineClient
	conn *grpc.ClientConn
}

// serviceConfig balances round robin over healthy daemons.
const serviceConfig = `{"loadBalancingConfig":[{"round_robin":{}}],"healthCheckConfig":{"serviceName":""}}`

// Dial connects to addrs: each "unix:PATH" or "host:port"; one address may
// also be any gRPC target ("dns:///name:port" spreads over every address
// the name resolves to).
func Dial(addrs []string, o Config) (*Client, error) {
	if len(addrs) == 0 {
		return nil, errors.New("client: no daemon address")
	}
	if o.MaxMessage == 0 {
		o.MaxMessage = 256 << 20
	}
	creds := o.TLS
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds), grpc.WithDefaultServiceConfig(serviceConfig),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(o.MaxMessage), grpc.MaxCallSendMsgSize(o.MaxMessage)),
		grpc.WithContextDialer(dialer)}
	if o.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer{token: o.Token, secure: o.TLS != nil}))
	}
	target := addrs[0]
	if len(addrs) > 1 || !strings.Contains(target, ":///") {
		r := manual.NewBuilderWithScheme("cuzk")
		var state resolver.State
		for _, a := range addrs {
			state.Addresses = append(state.Addresses, resolver.Address{Addr: a})
		}
		r.InitialState(state)
		opts = append(opts, grpc.WithResolvers(r))
		target = "cuzk:///daemons"
	}
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, fmt.Errorf("client: dial %v: %w", addrs, err)
	}
	return &Client{ProvingEngineClient: pb.NewProvingEngineClient(conn), conn: conn}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

func dialer(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	if path, ok := strings.CutPrefix(addr, "unix://"); ok {
		return d.DialContext(ctx, "unix", path)
	}
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		return d.DialContext(ctx, "unix", path)
	}
	return d.DialContext(ctx, "tcp", addr)
}

// bearer sends "authorization: Bearer <token>".
type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.secure }
