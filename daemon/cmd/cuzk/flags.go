package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/cuzk-dev/cuzk/daemon/api/cuzkv1"
	"github.com/cuzk-dev/cuzk/daemon/client"
	"github.com/cuzk-dev/cuzk/internal/cli"
	"github.com/cuzk-dev/cuzk/internal/stats"
	"github.com/cuzk-dev/cuzk/prover/circuits/registry"
)

// defaultAddr is cuzk-daemon's default gRPC address.
const defaultAddr = "127.0.0.1:9820"

// usageError is an error in how a command was called (exit status 2).
type usageError struct{ error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// daemonFlags are the flags of every command that talks to a daemon.
type daemonFlags struct {
	addr, token string
	timeout     time.Duration
	maxMessage  stats.Bytes
}

func (d *daemonFlags) add(fs *flag.FlagSet) {
	addr := os.Getenv("CUZK_ADDR")
	if addr == "" {
		addr = defaultAddr
	}
	fs.StringVar(&d.addr, "addr", addr, "daemon address(es), comma separated: unix:PATH, host:port or dns:///name:port ($CUZK_ADDR)")
	cli.SecretVar(fs, &d.token, "token", "CUZK_DAEMON_TOKEN", "the daemon's bearer `TOKEN` (never printed)", os.Getenv)
	fs.DurationVar(&d.timeout, "timeout", 0, "give up after this long (0: never; negative is refused)")
	d.maxMessage = stats.Bytes(256 * stats.MiB)
	fs.Var(&d.maxMessage, "max-message", "largest gRPC message sent or received (units: 512MiB, 1GiB)")
}

// dial connects to the daemons and returns ctx bounded by -timeout.
func (d *daemonFlags) dial(ctx context.Context) (*client.Client, context.Context, context.CancelFunc, error) {
	if d.timeout < 0 {
		return nil, nil, nil, usagef("-timeout %s: want a positive duration, or 0 for no limit", d.timeout)
	}
	if d.maxMessage <= 0 || int64(d.maxMessage) > 2*stats.GiB-1 {
		return nil, nil, nil, usagef("-max-message %s: want 1 byte to 2 GiB", d.maxMessage)
	}
	c, err := client.Dial(strings.Split(d.addr, ","), client.Config{Token: d.token, MaxMessage: int(d.maxMessage)})
	if err != nil {
		return nil, nil, nil, err
	}
	cancel := context.CancelFunc(func() {})
	if d.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, d.timeout)
	}
	return c, ctx, cancel, nil
}

// circuitFlags name a circuit of the registry and its parameters.
type circuitFlags struct {
	id, constraints string
	params          paramList
}

func (f *circuitFlags) add(fs *flag.FlagSet) {
	fs.StringVar(&f.id, "circuit", "porep-synth", "circuit id: "+strings.Join(registry.Default().IDs(), ", "))
	fs.StringVar(&f.constraints, "constraints", "4096", "the constraints of porep-synth and porep-c2 (2^k or an integer)")
	fs.Var(&f.params, "param", "circuit parameter name=value (repeatable; the other circuits' parameters)")
}

// resolve returns the circuit the flags name, refusing arguments after
// them. -constraints fills the circuit's constraints parameter when -param
// gives the circuit too few parameters without it (porep-synth, porep-c2).
func (f *circuitFlags) resolve(args []string) (*registry.Resolved, error) {
	if err := noArgs(args); err != nil {
		return nil, err
	}
	params := map[string]uint64{}
	for k, v := range f.params {
		params[k] = v
	}
	r, err := registry.Default().Resolve(f.id, params)
	if err == nil {
		return r, nil
	}
	if _, given := params["constraints"]; !given {
		n, perr := stats.ParseCount(f.constraints)
		if perr != nil {
			return nil, usagef("-constraints: %v", perr)
		}
		params["constraints"] = uint64(n)
		if r, err2 := registry.Default().Resolve(f.id, params); err2 == nil {
			return r, nil
		}
	}
	return nil, usageError{err}
}

// pbCircuit returns the circuit as the protocol names it.
func pbCircuit(r *registry.Resolved) *pb.Circuit { return &pb.Circuit{Id: r.Def.ID, Params: r.Params} }

// paramList is repeated name=value flags.
type paramList map[string]uint64

func (p *paramList) String() string { return fmt.Sprint(map[string]uint64(*p)) }
func (p *paramList) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	n, err := strconv.ParseUint(v, 10, 64)
	if !ok || err != nil {
		return fmt.Errorf("want name=unsigned integer, got %q", s)
	}
	if *p == nil {
		*p = paramList{}
	}
	(*p)[k] = n
	return nil
}

// enumFlag parses the short name of a protocol enum (see client.ParseEnum).
func enumFlag[E interface {
	~int32
	Descriptor() protoreflect.EnumDescriptor
}](name, s string, zero E) (E, error) {
	n, ok := client.ParseEnum(zero.Descriptor(), s)
	if !ok {
		return zero, usagef("-%s %q: want one of %s", name, s, strings.Join(client.EnumNames(zero.Descriptor()), ", "))
	}
	return E(n), nil
}

// output prints a command's results: text for people, JSON for scripts;
// errw takes what is neither (a progress bar).
type output struct {
	w, errw io.Writer
	json    bool
}

// text prints a line in text mode.
func (o *output) text(format string, args ...any) {
	if !o.json {
		fmt.Fprintf(o.w, format+"\n", args...)
	}
}

// message prints m as client.JSON writes it.
func (o *output) message(m proto.Message) error {
	b, err := client.JSON(m, true)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.w, "%s\n", b)
	return err
}

// value prints v as indented JSON.
func (o *output) value(v any) error {
	enc := json.NewEncoder(o.w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
