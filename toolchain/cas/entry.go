package cas

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"
)

// entryVersion is the schema version of entry files.
const entryVersion = 1

// Output is one named output of an action.
type Output struct {
	Name string   `json:"name"`
	ID   OutputID `json:"id"`
	Size int64    `json:"size"`
}

// Entry records what an action produced and what went into it.
type Entry struct {
	Version int       `json:"version"`
	Action  ActionID  `json:"action"`
	Outputs []Output  `json:"outputs"`
	Inputs  []string  `json:"inputs"` // the key's input lines, for explain
	Created time.Time `json:"created"`
}

// Put stores outputs (name → bytes) as the result of action id, with the
// input lines that formed the key. Blobs are written before the entry, so a
// reader that sees the entry finds its blobs.
func (s *Store) Put(ctx context.Context, id ActionID, outputs map[string][]byte, inputs []string) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, fmt.Errorf("cas put %s: %w", id.Short(), err)
	}
	e := Entry{Version: entryVersion, Action: id, Inputs: inputs, Created: s.now().UTC()}
	for name, b := range outputs {
		oid := SumOutput(b)
		p := s.path("o", oid.String())
		if _, err := os.Stat(p); err != nil {
			if err := s.writeAtomic(p, b); err != nil {
				return Entry{}, fmt.Errorf("cas put %s output %s: %w", id.Short(), name, err)
			}
		}
		e.Outputs = append(e.Outputs, Output{Name: name, ID: oid, Size: int64(len(b))})
	}
	sort.Slice(e.Outputs, func(i, j int) bool { return e.Outputs[i].Name < e.Outputs[j].Name })
	b, err := json.MarshalIndent(e, "", " ")
	if err != nil {
		return Entry{}, fmt.Errorf("cas put %s: %w", id.Short(), err)
	}
	if err := s.writeAtomic(s.path("a", id.String()), b); err != nil {
		return Entry{}, fmt.Errorf("cas put %s: %w", id.Short(), err)
	}
	return e, nil
}

// Get returns the entry for id and its outputs' bytes, each re-hashed. A
// missing entry is ErrNotFound. A damaged entry (unparsable, or a blob that
// is missing or does not match its hash) is removed and reported as
// ErrNotFound wrapping the reason, so the caller rebuilds. A hit refreshes
// the entry's modification time, which Trim reads as "last used".
func (s *Store) Get(ctx context.Context, id ActionID) (Entry, map[string][]byte, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, nil, fmt.Errorf("cas get %s: %w", id.Short(), err)
	}
	p := s.path("a", id.String())
	raw, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return Entry{}, nil, ErrNotFound
	}
	if err != nil {
		return Entry{}, nil, fmt.Errorf("cas get %s: %w", id.Short(), err)
	}
	e, data, why := s.decode(id, raw)
	if why != nil {
		// The entry is useless; removing it lets the rebuild replace it.
		_ = os.Remove(p)
		return Entry{}, nil, fmt.Errorf("%w: entry %s removed: %v", ErrNotFound, id.Short(), why)
	}
	now := s.now()
	// A failed touch only makes Trim think the entry is older than it is.
	_ = os.Chtimes(p, now, now)
	return e, data, nil
}

// Entry returns the entry for id without reading its blobs (explain).
func (s *Store) Entry(ctx context.Context, id ActionID) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, fmt.Errorf("cas entry %s: %w", id.Short(), err)
	}
	raw, err := os.ReadFile(s.path("a", id.String()))
	if errors.Is(err, os.ErrNotExist) {
		return Entry{}, ErrNotFound
	}
	if err != nil {
		return Entry{}, fmt.Errorf("cas entry %s: %w", id.Short(), err)
	}
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return Entry{}, fmt.Errorf("%w: entry %s: %v", ErrNotFound, id.Short(), err)
	}
	return e, nil
}

func (s *Store) decode(id ActionID, raw []byte) (Entry, map[string][]byte, error) {
	var e Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return Entry{}, nil, fmt.Errorf("parse: %w", err)
	}
	if e.Version != entryVersion || e.Action != id {
		return Entry{}, nil, fmt.Errorf("entry names version %d action %s", e.Version, e.Action)
	}
	data := make(map[string][]byte, len(e.Outputs))
	for _, o := range e.Outputs {
		b, err := s.readBlob(o.ID)
		if err != nil {
			return Entry{}, nil, fmt.Errorf("output %s: %w", o.Name, err)
		}
		data[o.Name] = b
	}
	return e, data, nil
}

// readBlob reads and verifies a blob; a damaged blob is removed.
func (s *Store) readBlob(id OutputID) ([]byte, error) {
	p := s.path("o", id.String())
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	if SumOutput(b) != id {
		// Damaged bytes must not be served again, to this or any later reader.
		_ = os.Remove(p)
		return nil, fmt.Errorf("%w: blob %s has other bytes", ErrCorrupt, id.String()[:12])
	}
	return b, nil
}

// SetRef points the named reference at id (e.g. "the last build of kernel
// k in tree t"), atomically.
func (s *Store) SetRef(name string, id ActionID) error {
	if err := s.writeAtomic(s.path("r", refHex(name)), []byte(id.String()+"\n")); err != nil {
		return fmt.Errorf("cas set ref %s: %w", name, err)
	}
	return nil
}

// Ref returns the action the named reference points at, or ErrNotFound.
func (s *Store) Ref(name string) (ActionID, error) {
	b, err := os.ReadFile(s.path("r", refHex(name)))
	if errors.Is(err, os.ErrNotExist) {
		return ActionID{}, ErrNotFound
	}
	if err != nil {
		return ActionID{}, fmt.Errorf("cas ref %s: %w", name, err)
	}
	id, err := ParseActionID(string(trimNL(b)))
	if err != nil {
		return ActionID{}, fmt.Errorf("%w: ref %s: %v", ErrNotFound, name, err)
	}
	return id, nil
}

func refHex(name string) string { return SumOutput([]byte(name)).String() }

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
