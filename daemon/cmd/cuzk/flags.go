package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
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
	addr := os.Getenv(client.EnvAddr)
	if addr == "" {
		addr = defaultAddr
	}
	fs.StringVar(&d.addr, "addr", addr, "daemon address(es), comma separated: unix:PATH, host:port or dns:///name:port ($"+client.EnvAddr+")")
	cli.SecretVar(fs, &d.token, "token", client.EnvToken, "the daemon's bearer `TOKEN` (never printed)", os.Getenv)
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

// circuitFlags name a circuit of the registry and its parameters: one
// flag per parameter name of any circuit (-constraints, -bytes, -depth),
// and -param name=value for any of them.
type circuitFlags struct {
	fs     *flag.FlagSet
	id     string
	values map[string]*string // parameter name → its flag's value ("": not given)
	params paramList
}

func (f *circuitFlags) add(fs *flag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.id, "circuit", "porep-synth", "circuit id: "+strings.Join(registry.Default().IDs(), ", ")+` ("cuzk circuits" lists their parameters)`)
	f.values = map[string]*string{}
	for _, name := range paramNames() {
		var who []string
		var p registry.Param
		for _, d := range registry.Default().Definitions() {
			for _, q := range d.Params {
				if q.Name == name {
					who, p = append(who, d.ID), q
				}
			}
		}
		f.values[name] = fs.String(name, "", fmt.Sprintf("%s's %s: 2^k or an integer, %s (default %s)", strings.Join(who, " and "), p.Doc, span(p), count(p.Default)))
	}
	fs.Var(&f.params, "param", "circuit parameter name=value (repeatable; the same as -NAME value)")
}

// paramNames are the parameter names of every circuit, sorted.
func paramNames() []string {
	seen := map[string]bool{}
	for _, d := range registry.Default().Definitions() {
		for _, p := range d.Params {
			seen[p.Name] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// span writes a parameter's range: 2^k for the large powers of two.
func span(p registry.Param) string { return count(p.Min) + ".." + count(p.Max) }

func count(n uint64) string {
	if n >= 1<<10 {
		return stats.FormatCount(int(n))
	}
	return strconv.FormatUint(n, 10)
}

// resolve returns the circuit the flags name, refusing arguments after
// them. Each parameter of the circuit comes from -NAME or -param NAME=V,
// else its default; a parameter of another circuit is refused. Every
// problem is reported at once, each naming the flag to pass.
func (f *circuitFlags) resolve(args []string) (*registry.Resolved, error) {
	if err := noArgs(args); err != nil {
		return nil, err
	}
	reg := registry.Default()
	var def *registry.Definition
	for _, d := range reg.Definitions() {
		if d.ID == f.id {
			def = d
		}
	}
	if def == nil {
		return nil, usagef(`-circuit %q: no such circuit; "cuzk circuits" lists them: %s`, f.id, strings.Join(reg.IDs(), ", "))
	}
	var problems []string
	takes := map[string]bool{}
	for _, p := range def.Params {
		takes[p.Name] = true
	}
	params := map[string]uint64{}
	for name, v := range f.params {
		params[name] = v
	}
	given := map[string]bool{}
	f.fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	for _, name := range paramNames() {
		if !given[name] {
			continue
		}
		v, err := parseParam(*f.values[name])
		if err != nil {
			problems = append(problems, fmt.Sprintf("-%s %q: want 2^k or an integer", name, *f.values[name]))
			continue
		}
		params[name] = v
	}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if !takes[name] {
			problems = append(problems, fmt.Sprintf("-%s: %s takes no %s (its parameters: %s)", name, def.ID, name, flagList(def)))
		}
	}
	for _, p := range def.Params {
		v, ok := params[p.Name]
		if !ok {
			params[p.Name] = p.Default
			continue
		}
		if v < p.Min || v > p.Max {
			problems = append(problems, fmt.Sprintf("-%s %d: %s's %s must be in %s, e.g. -%s %s", p.Name, v, def.ID, p.Doc, span(p), p.Name, count(p.Default)))
		}
	}
	if len(problems) > 0 {
		return nil, usagef("%s", strings.Join(problems, "; "))
	}
	r, err := reg.Resolve(def.ID, params)
	if err != nil {
		return nil, usageError{err} // the checks above should have caught it
	}
	return r, nil
}

// parseParam reads a parameter's value: 2^k or a decimal integer (0
// included, for the range check to refuse with the range).
func parseParam(s string) (uint64, error) {
	if n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64); err == nil {
		return n, nil
	}
	n, err := stats.ParseCount(s)
	return uint64(n), err
}

// flagList lists a circuit's parameters as the flags that set them.
func flagList(d *registry.Definition) string {
	if len(d.Params) == 0 {
		return "none"
	}
	out := make([]string, len(d.Params))
	for i, p := range d.Params {
		out[i] = "-" + p.Name
	}
	return strings.Join(out, ", ")
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
// errw takes what is neither (progress). mark, when set, is told of each
// line of text (the progress on errw counts its silence from it).
type output struct {
	w, errw io.Writer
	json    bool
	mark    func()
}

// text prints a line in text mode.
func (o *output) text(format string, args ...any) {
	if !o.json {
		fmt.Fprintf(o.w, format+"\n", args...)
		if o.mark != nil {
			o.mark()
		}
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
