package cas

import (
	"context"
	"errors"
	"fmt"
)

// Cache is what a build needs from a cache, local or remote: an action's
// outputs (each verified against its OutputID), a store of new ones, and an
// entry alone. *Store and *Remote implement it and ReadOnly wraps either.
// Implementations are safe for concurrent use by goroutines.
//
// Errors: ErrNotFound is a miss; a miss on damaged data also matches
// ErrCorrupt (the caller reports it); ErrUnavailable means the cache could
// not answer (server down, refused, 5xx, timed out) and the caller goes on
// without it; ErrReadOnly is a refused Put that sent and wrote nothing.
type Cache interface {
	Get(ctx context.Context, id ActionID) (Entry, map[string][]byte, error)
	Put(ctx context.Context, id ActionID, outputs map[string][]byte, inputs []string) (Entry, error)
	Entry(ctx context.Context, id ActionID) (Entry, error)
}

var (
	_ Cache = (*Store)(nil)
	_ Cache = (*Remote)(nil)
)

// ErrUnavailable reports a cache that could not answer: connection refused
// or reset, a 5xx or other unexpected status, an authorization refusal, or
// a timeout. It says nothing about the action; callers build without the
// cache.
var ErrUnavailable = errors.New("cas: cache unavailable")

// ErrReadOnly reports a Put on a read-only cache.
var ErrReadOnly = errors.New("cas: read-only cache")

// ReadOnly returns c with Put refused: it returns ErrReadOnly and neither
// sends nor writes anything. Get and Entry pass through. It is as safe for
// concurrent use as c.
func ReadOnly(c Cache) Cache { return readOnly{c} }

type readOnly struct{ c Cache }

func (r readOnly) Get(ctx context.Context, id ActionID) (Entry, map[string][]byte, error) {
	return r.c.Get(ctx, id)
}

func (r readOnly) Entry(ctx context.Context, id ActionID) (Entry, error) { return r.c.Entry(ctx, id) }

func (r readOnly) Put(_ context.Context, id ActionID, _ map[string][]byte, _ []string) (Entry, error) {
	return Entry{}, fmt.Errorf("cas put %s: %w", id.Short(), ErrReadOnly)
}

// String names the wrapped cache, marked read-only.
func (r readOnly) String() string { return fmt.Sprintf("%v (read-only)", r.c) }
