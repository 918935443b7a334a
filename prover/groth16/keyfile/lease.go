package keyfile

import (
	"errors"
	"sync"
)

// ErrChanged is a key file that another process opened for writing or
// truncated while its key was mapped (Leased).
var ErrChanged = errors.New("file changed under its mapping")

// Leased guards the mapping against another process's truncation or
// rewrite while the key is open, where the system allows it (a Linux read
// lease, fcntl F_SETLEASE, on the mapped file's descriptor): whatever is
// proving from PK when the file changes, on goroutines of this package or
// not (gnark-crypto's MSM workers, a GPU backend's host staging copies),
// goes on reading the bytes that were mapped, and onBreak is called with
// the key once they are safe, before the other process goes on.
//
// How: a lease makes the kernel hold another process's open for writing,
// or truncate(2), for up to /proc/sys/fs/lease-break-time seconds (45 by
// default) and tell this process with SIGIO. The notice is received
// through os/signal: the Go runtime's handler, installed for every signal
// at start with SA_RESTART, drops a SIGIO unless it is asked for, so
// asking for it changes nothing else (a daemon's own handlers, as
// internal/signals installs for SIGTERM, SIGINT and SIGHUP, are for other
// numbers). os/signal may merge two SIGIOs, which is harmless: every
// notice, and a poll each second besides, asks every leased descriptor
// with F_GETLEASE, and finds the keys whose lease is breaking. Such a key's mapping is then replaced in place by a private
// copy: the mapped bytes are copied into anonymous memory, which mremap
// moves over the mapping's own addresses in one step, so that a reader
// sees the file's page or the copy's, the same bytes, at every address.
// Then onBreak is called, and only then is the lease released and the
// other process's open or truncate goes on. A copy-on-write of a MAP_PRIVATE file mapping would
// not do: truncate(2) discards a file mapping's private copies too, past
// the new end (a read there still raises SIGBUS), while anonymous memory
// is no longer the file's.
//
// The copy costs the key's size in anonymous memory until the key is
// closed. It is made only when the system's MemAvailable leaves a tenth
// of its memory beside it; otherwise the key is not copied, Check fails
// from then on (the users about to read the key stop), and the lease is
// held until Close, which releases it (so the caller should close the key
// once its readers are done): a proof still reading the mapping when the
// lease-break time runs out can still fault. Changed says which happened.
//
// Memory a device registered (page-locked) from the mapping keeps the
// file's pages it pinned: they hold the same bytes after a truncation
// (the kernel frees them only when they are unpinned), but a rewrite in
// place of a file, without truncating it first, is seen through them.
//
// Where no lease can be taken (LeaseErr: another file system than a local
// one, a file open for writing elsewhere, a file this process does not own
// without CAP_LEASE, a system without leases), the key opens as without
// this option. onBreak runs on a goroutine of its own; it may call any
// method of the key, Close included.
func Leased(onBreak func(*Key)) OpenOption {
	return func(c *openConfig) error {
		if onBreak == nil {
			onBreak = func(*Key) {}
		}
		c.onBreak = onBreak
		return nil
	}
}

// leaseState is a key's lease: what Leased asked for and what came of it.
type leaseState struct {
	onBreak func(*Key)
	err     error // why no lease is held (nil when one was taken)
	held    bool  // the lease is held (and the key is watched)

	// convert is held while the mapping is being made private, so that
	// Close waits for it (a key's mu is not held meanwhile: Check stays
	// cheap for the callers holding their own locks).
	convert  sync.Mutex
	breaking bool  // the break is being handled (under the key's mu)
	changed  error // set under the key's mu once the break is handled
	private  bool  // the mapping is a private copy: no file pages left
}

// LeaseErr reports why a key opened with Leased holds no lease (nil when
// it holds one, or held one until the file changed): a truncation of the
// file while a proof reads the mapping then ends the process with SIGBUS,
// as without Leased.
func (k *Key) LeaseErr() error {
	if k.lease == nil {
		return nil
	}
	return k.lease.err
}

// Changed reports whether another process opened the key's file for
// writing or truncated it while the key held its lease: an *Error naming
// the file, wrapping ErrChanged, and saying whether the key reads a
// private copy of the bytes mapped (then it stays whole, and Check is
// nil) or the mapping still (then Check fails: the key should be closed
// once its readers end, which lets the other process go on). Nil while
// the file is unchanged.
func (k *Key) Changed() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.lease == nil {
		return nil
	}
	return k.lease.changed
}
