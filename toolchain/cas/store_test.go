package cas

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var ctx = context.Background()

func newStore(t *testing.T, opts ...Option) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), opts...)
	require.NoError(t, err)
	return s
}

func randomAction(t *testing.T) ActionID {
	var a ActionID
	_, err := rand.Read(a[:])
	require.NoError(t, err)
	return a
}

func TestPutGetRoundTrip(t *testing.T) {
	s := newStore(t)
	id := randomAction(t)
	_, _, err := s.Get(ctx, id)
	require.ErrorIs(t, err, ErrNotFound)

	outs := map[string][]byte{"k.fatbin": []byte("device code"), "k.log": {}}
	put, err := s.Put(ctx, id, outs, []string{"input a", "input b"})
	require.NoError(t, err)
	e, data, err := s.Get(ctx, id)
	require.NoError(t, err)
	assert.Equal(t, outs, data)
	assert.Equal(t, put.Inputs, e.Inputs)
	assert.Equal(t, id, e.Action)
	require.Len(t, e.Outputs, 2)
	assert.Equal(t, OutputID(sha256.Sum256([]byte("device code"))), e.Outputs[0].ID)
}

func TestDamageIsAMiss(t *testing.T) {
	cases := map[string]func(t *testing.T, s *Store, id ActionID, e Entry){
		"blob bytes changed": func(t *testing.T, s *Store, id ActionID, e Entry) {
			require.NoError(t, os.WriteFile(s.path("o", e.Outputs[0].ID.String()), []byte("flipped"), 0o644))
		},
		"blob missing": func(t *testing.T, s *Store, id ActionID, e Entry) {
			require.NoError(t, os.Remove(s.path("o", e.Outputs[0].ID.String())))
		},
		"entry truncated": func(t *testing.T, s *Store, id ActionID, e Entry) {
			p := s.path("a", id.String())
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(p, b[:len(b)/2], 0o644))
		},
		"entry for another action": func(t *testing.T, s *Store, id ActionID, e Entry) {
			other := randomAction(t)
			b, err := os.ReadFile(s.path("a", id.String()))
			require.NoError(t, err)
			require.NoError(t, os.MkdirAll(filepath.Dir(s.path("a", other.String())), 0o755))
			require.NoError(t, os.WriteFile(s.path("a", other.String()), b, 0o644))
			require.NoError(t, os.WriteFile(s.path("a", id.String()), b[:3], 0o644))
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			id := randomAction(t)
			e, err := s.Put(ctx, id, map[string][]byte{"x": []byte("payload")}, nil)
			require.NoError(t, err)
			damage(t, s, id, e)
			_, _, err = s.Get(ctx, id)
			require.ErrorIs(t, err, ErrNotFound)
			assert.NoFileExists(t, s.path("a", id.String()), "damaged entry must be removed")
			// The rebuild's Put makes it a hit again.
			_, err = s.Put(ctx, id, map[string][]byte{"x": []byte("payload")}, nil)
			require.NoError(t, err)
			_, data, err := s.Get(ctx, id)
			require.NoError(t, err)
			assert.Equal(t, []byte("payload"), data["x"])
		})
	}
}

func TestConcurrentPutGet(t *testing.T) {
	s := newStore(t)
	id := randomAction(t)
	payload := make([]byte, 1<<16)
	_, err := rand.Read(payload)
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 16; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, err := s.Put(ctx, id, map[string][]byte{"f": payload}, nil)
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, data, err := s.Get(ctx, id)
			if err == nil && string(data["f"]) != string(payload) {
				err = errors.New("reader saw other bytes")
			}
			if errors.Is(err, ErrNotFound) {
				err = nil // not written yet is fine; a partial entry is not
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestLockIsExclusive(t *testing.T) {
	s := newStore(t)
	id := randomAction(t)
	unlock, err := s.Lock(id)
	require.NoError(t, err)
	got := make(chan struct{})
	go func() {
		u, err := s.Lock(id)
		if err == nil {
			u()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("second Lock returned while the first was held")
	case <-time.After(100 * time.Millisecond):
	}
	unlock()
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("second Lock never returned after unlock")
	}
}

func TestTrimRemovesOldEntriesAndTheirBlobs(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	s := newStore(t, WithClock(func() time.Time { return now }))
	old, fresh := randomAction(t), randomAction(t)
	eOld, err := s.Put(ctx, old, map[string][]byte{"f": []byte("old bytes")}, nil)
	require.NoError(t, err)
	_, err = s.Put(ctx, fresh, map[string][]byte{"f": []byte("fresh bytes")}, nil)
	require.NoError(t, err)
	ten := now.Add(-10 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(s.path("a", old.String()), ten, ten))
	require.NoError(t, os.Chtimes(s.path("o", eOld.Outputs[0].ID.String()), ten, ten))
	for _, p := range []string{s.path("a", fresh.String())} {
		require.NoError(t, os.Chtimes(p, now, now))
	}

	r, err := s.Trim(7 * 24 * time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 1, r.EntriesRemoved)
	assert.Equal(t, 1, r.EntriesKept)
	assert.Equal(t, 1, r.BlobsRemoved)
	_, _, err = s.Get(ctx, old)
	assert.ErrorIs(t, err, ErrNotFound)
	_, data, err := s.Get(ctx, fresh)
	require.NoError(t, err)
	assert.Equal(t, []byte("fresh bytes"), data["f"])
}

func TestStatsAndCounters(t *testing.T) {
	s := newStore(t)
	_, err := s.Put(ctx, randomAction(t), map[string][]byte{"a": []byte("1"), "b": []byte("22")}, nil)
	require.NoError(t, err)
	require.NoError(t, s.Count(Counters{Hits: 3, Misses: 1, Puts: 1}))
	require.NoError(t, s.Count(Counters{Hits: 2}))
	st, err := s.Stats()
	require.NoError(t, err)
	assert.Equal(t, 1, st.Entries)
	assert.Equal(t, 2, st.Blobs)
	assert.Equal(t, int64(3), st.BlobBytes)
	assert.Equal(t, Counters{Hits: 5, Misses: 1, Puts: 1}, st.Counters)
}

func TestRefs(t *testing.T) {
	s := newStore(t)
	_, err := s.Ref("kernel fr_add")
	require.ErrorIs(t, err, ErrNotFound)
	id := randomAction(t)
	require.NoError(t, s.SetRef("kernel fr_add", id))
	got, err := s.Ref("kernel fr_add")
	require.NoError(t, err)
	assert.Equal(t, id, got)
}

func TestParseIDs(t *testing.T) {
	id := randomAction(t)
	back, err := ParseActionID(id.String())
	require.NoError(t, err)
	assert.Equal(t, id, back)
	for _, bad := range []string{"", "zz", id.String()[:10], id.String() + "00"} {
		_, err := ParseActionID(bad)
		assert.Error(t, err, bad)
	}
}

func TestTrimRemovesAbandonedTemporariesAndStatsSkipsThem(t *testing.T) {
	now := time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	s := newStore(t, WithClock(func() time.Time { return now }))
	_, err := s.Put(ctx, randomAction(t), map[string][]byte{"f": []byte("x")}, nil)
	require.NoError(t, err)
	old, young := filepath.Join(s.Dir(), "o", "ab", ".ab12.tmp123"), filepath.Join(s.Dir(), "a", "cd", ".cd34.tmp456")
	for _, p := range []string{old, young} {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("half"), 0o644))
	}
	two := now.Add(-2 * time.Hour)
	require.NoError(t, os.Chtimes(old, two, two))
	require.NoError(t, os.Chtimes(young, now, now))
	st, err := s.Stats()
	require.NoError(t, err)
	assert.Equal(t, 1, st.Entries, "a temporary is not an entry")
	assert.Equal(t, 1, st.Blobs, "a temporary is not a blob")
	r, err := s.Trim(30 * 24 * time.Hour)
	require.NoError(t, err)
	assert.Equal(t, 0, r.BlobsRemoved)
	assert.NoFileExists(t, old, "an abandoned temporary is removed")
	assert.FileExists(t, young, "a live writer's temporary is kept")
}
