package registry

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/cuzk-dev/cuzk/prover/circuits/porep"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// ErrInvalid is wrapped by every error about a request's circuit, params
// or input; the message names the field.
var ErrInvalid = errors.New("invalid request")

// ErrUnknownCircuit is wrapped (with ErrInvalid) when no circuit has the id.
var ErrUnknownCircuit = errors.New("unknown circuit")

// Param is one numeric parameter of a circuit.
type Param struct {
	Name     string
	Min, Max uint64
	Doc      string
	// Default is a small value within Min..Max that proves in seconds on a
	// CPU: what a client takes when the parameter is not given, and the
	// value of examples.
	Default uint64
}

// Definition is one circuit of the registry. Its functions are only called
// with params that passed the Param bounds.
type Definition struct {
	ID     string
	Params []Param
	// InputSize is the exact byte length of the input for params.
	InputSize func(params map[string]uint64) int
	// Check validates input (already of the right length) cheaply, without
	// building the circuit; nil means any input of the right length is
	// valid. Build must accept every input Check accepts.
	Check func(params map[string]uint64, input []byte) error
	// Build decodes input (already of the right length) into the circuit
	// and its public inputs (without the constant 1).
	Build func(params map[string]uint64, input []byte) (r1cs.Circuit, error)
	// Example returns a valid input derived from seed (for clients,
	// benchmarks and the shape compilation).
	Example func(params map[string]uint64, seed int64) ([]byte, error)
	// Counts returns the shape's counts (r1cs.System.Counts' form) without
	// compiling, when the circuit knows them; nil means unknown until a
	// compile. The daemon uses them to refuse, when a job arrives, what its
	// memory budgets can never hold.
	Counts func(params map[string]uint64) (*r1cs.System, error)
}

// Registry maps circuit ids to definitions. It is read-only after New and
// safe for concurrent use.
type Registry struct {
	defs map[string]*Definition
}

// New returns a registry of defs; ids must be unique.
func New(defs ...*Definition) (*Registry, error) {
	r := &Registry{defs: make(map[string]*Definition, len(defs))}
	for _, d := range defs {
		if _, dup := r.defs[d.ID]; dup || d.ID == "" {
			return nil, fmt.Errorf("registry: duplicate or empty circuit id %q", d.ID)
		}
		r.defs[d.ID] = d
	}
	return r, nil
}

// Default returns the registry of cuzk's circuits: porep-synth, porep-c2,
// sha256 and poseidon-merkle.
func Default() *Registry {
	r, err := New(porepDef(porep.Synth), porepDef(porep.C2), sha256Def(), poseidonMerkle())
	if err != nil {
		panic(err) // the built-in ids are distinct constants
	}
	return r
}

// IDs returns the circuit ids, sorted.
func (r *Registry) IDs() []string {
	ids := make([]string, 0, len(r.defs))
	for id := range r.defs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Definitions returns the circuits' definitions, sorted by id.
func (r *Registry) Definitions() []*Definition {
	out := make([]*Definition, 0, len(r.defs))
	for _, id := range r.IDs() {
		out = append(out, r.defs[id])
	}
	return out
}

// Resolved is a circuit with checked parameters: one proving key's shape.
type Resolved struct {
	Def    *Definition
	Params map[string]uint64
	// Key names the shape canonically: id/name=value,... sorted by name.
	Key string
}

// Resolve checks params against circuit id's definition. Its error names
// every problem, not just the first: each missing, out-of-range or unknown
// parameter by its field (circuit.params.NAME), in the definition's order
// and then by name.
func (r *Registry) Resolve(id string, params map[string]uint64) (*Resolved, error) {
	d, ok := r.defs[id]
	if !ok {
		return nil, fmt.Errorf("%w: circuit.id: %w %q (known: %s)", ErrInvalid, ErrUnknownCircuit, id, strings.Join(r.IDs(), ", "))
	}
	known := make(map[string]bool, len(d.Params))
	clean := make(map[string]uint64, len(d.Params))
	var problems []string
	for _, p := range d.Params {
		known[p.Name] = true
		v, ok := params[p.Name]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("circuit.params.%s: missing (%s, %d..%d)", p.Name, p.Doc, p.Min, p.Max))
		case v < p.Min || v > p.Max:
			problems = append(problems, fmt.Sprintf("circuit.params.%s: %d out of range %d..%d (%s)", p.Name, v, p.Min, p.Max, p.Doc))
		default:
			clean[p.Name] = v
		}
	}
	for _, name := range slices.Sorted(maps.Keys(params)) {
		if !known[name] {
			problems = append(problems, fmt.Sprintf("circuit.params.%s: unknown parameter of %s (it takes %s)", name, id, paramNames(d)))
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrInvalid, strings.Join(problems, "; "))
	}
	return &Resolved{Def: d, Params: clean, Key: key(id, clean)}, nil
}

// paramNames lists d's parameter names.
func paramNames(d *Definition) string {
	names := make([]string, len(d.Params))
	for i, p := range d.Params {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

func key(id string, params map[string]uint64) string {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%d", n, params[n])
	}
	return id + "/" + strings.Join(parts, ",")
}

// InputSize is the exact input length this shape takes.
func (c *Resolved) InputSize() int { return c.Def.InputSize(c.Params) }

// Check validates input for this shape without building the circuit
// (cheap: a service checks it when a request arrives).
func (c *Resolved) Check(input []byte) error {
	if want := c.InputSize(); len(input) != want {
		return fmt.Errorf("%w: input: %d bytes, %s takes %d", ErrInvalid, len(input), c.Key, want)
	}
	if c.Def.Check != nil {
		if err := c.Def.Check(c.Params, input); err != nil {
			return fmt.Errorf("%w: input: %w", ErrInvalid, err)
		}
	}
	return nil
}

// Circuit decodes input into a circuit of this shape.
func (c *Resolved) Circuit(input []byte) (r1cs.Circuit, error) {
	if err := c.Check(input); err != nil {
		return nil, err
	}
	circ, err := c.Def.Build(c.Params, input)
	if err != nil {
		return nil, fmt.Errorf("%w: input: %w", ErrInvalid, err)
	}
	return circ, nil
}

// Counts returns the shape's counts without compiling, and whether the
// circuit knows them (see Definition.Counts).
func (c *Resolved) Counts() (*r1cs.System, bool, error) {
	if c.Def.Counts == nil {
		return nil, false, nil
	}
	sys, err := c.Def.Counts(c.Params)
	if err != nil {
		return nil, true, fmt.Errorf("%s: counts: %w", c.Key, err)
	}
	return sys, true, nil
}

// Example returns a valid input for this shape derived from seed.
func (c *Resolved) Example(seed int64) ([]byte, error) {
	b, err := c.Def.Example(c.Params, seed)
	if err != nil {
		return nil, fmt.Errorf("%s: example input: %w", c.Key, err)
	}
	return b, nil
}

// decodeElement reads a 32-byte big-endian canonical field element.
func decodeElement(b []byte, field string) (fr.Element, error) {
	var e fr.Element
	if err := e.SetBytesCanonical(b); err != nil {
		return e, fmt.Errorf("%s: not a canonical field element (must be below r): %w", field, err)
	}
	return e, nil
}
