package kbuild

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/cuzk-dev/cuzk/toolchain/cas"
)

// remoteHealth remembers, for one Engine, that the remote stopped answering
// (no more lookups or uploads) or refused writes (no more uploads), so that
// a dead server costs one warning line and one timeout, not one per kernel.
// It is safe for concurrent use.
type remoteHealth struct {
	down     atomic.Bool
	noUpload atomic.Bool
	warnDown sync.Once
	warnPut  sync.Once
}

// slots bound the work of one Build: nvcc runs and remote fetches.
type slots struct {
	compile chan struct{}
	fetch   chan struct{}
}

func (e *Engine) newSlots() *slots {
	return &slots{compile: make(chan struct{}, e.jobs), fetch: make(chan struct{}, e.fetchJobs)}
}

func acquire(ctx context.Context, sem chan struct{}) error {
	select {
	case sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fetch asks the remote for u. It returns the outputs of a verified hit, or
// nil and, when the remote's copy was damaged, a note for the unit's line.
func (e *Engine) fetch(ctx context.Context, u Unit, s *slots) (map[string][]byte, string) {
	if e.remote == nil || e.remoteOK.down.Load() {
		return nil, ""
	}
	if err := acquire(ctx, s.fetch); err != nil {
		return nil, ""
	}
	defer func() { <-s.fetch }()
	if e.remoteOK.down.Load() { // it went down while this unit waited
		return nil, ""
	}
	_, data, err := e.remote.Get(ctx, u.ID)
	switch {
	case err == nil:
		if _, ok := data[fatbinOutput]; !ok {
			return nil, "remote entry has no fatbin output, not used"
		}
		return data, ""
	case errors.Is(err, cas.ErrCorrupt):
		return nil, "remote copy damaged, not used: " + err.Error()
	case errors.Is(err, cas.ErrUnavailable):
		e.remoteDown(err)
	}
	return nil, "" // a plain miss, or the build was cancelled
}

// upload stores a fresh build on the remote unless it is read-only or has
// failed before in this build; it reports whether the upload happened.
func (e *Engine) upload(ctx context.Context, u Unit, fatbin []byte) bool {
	if e.remote == nil || e.remoteOK.down.Load() || e.remoteOK.noUpload.Load() {
		return false
	}
	_, err := e.remote.Put(ctx, u.ID, map[string][]byte{fatbinOutput: fatbin}, u.Lines)
	switch {
	case err == nil:
		return true
	case errors.Is(err, cas.ErrReadOnly), ctx.Err() != nil:
		return false
	}
	e.remoteOK.noUpload.Store(true)
	e.remoteOK.warnPut.Do(func() {
		e.printf("warning: kernel cache: uploads to %v failed, none retried in this build: %v\n", e.remote, err)
	})
	return false
}

// remoteHas reports whether the remote holds u (explain), with a note when
// its entry is damaged.
func (e *Engine) remoteHas(ctx context.Context, u Unit) (bool, string) {
	if e.remote == nil || e.remoteOK.down.Load() {
		return false, ""
	}
	_, err := e.remote.Entry(ctx, u.ID)
	switch {
	case err == nil:
		return true, ""
	case errors.Is(err, cas.ErrCorrupt):
		return false, "remote entry damaged: " + err.Error()
	case errors.Is(err, cas.ErrUnavailable):
		e.remoteDown(err)
	}
	return false, ""
}

func (e *Engine) remoteDown(err error) {
	e.remoteOK.down.Store(true)
	e.remoteOK.warnDown.Do(func() {
		e.printf("warning: kernel cache: remote %v unavailable, going on without it: %v\n", e.remote, err)
	})
}
