package keyfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// leasePoll is how often the leased keys are asked even without a SIGIO
// (a handler installed later by other code could take the signal).
const leasePoll = time.Second

// takeLease takes a read lease on f: nil, or why there is none.
func takeLease(f *os.File) error {
	_, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_RDLCK)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EAGAIN):
		return fmt.Errorf("no file lease: the file is open for writing elsewhere (%w)", err)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return fmt.Errorf("no file lease: this process neither owns the file nor has CAP_LEASE (%w)", err)
	case errors.Is(err, syscall.EINVAL):
		return fmt.Errorf("no file lease: the file system does not support leases, or they are off (/proc/sys/fs/leases-enable) (%w)", err)
	default:
		return fmt.Errorf("no file lease: %w", err)
	}
}

// leaseBreaking reports whether the lease on f is being broken.
func leaseBreaking(f *os.File) bool {
	t, err := unix.FcntlInt(f.Fd(), unix.F_GETLEASE, 0)
	return err == nil && t != unix.F_RDLCK
}

// releaseLease lets the process breaking the lease go on.
func releaseLease(f *os.File) error {
	_, err := unix.FcntlInt(f.Fd(), unix.F_SETLEASE, unix.F_UNLCK)
	return err
}

// watcher finds the leased keys whose lease is breaking.
var watcher struct {
	mu    sync.Mutex
	keys  map[*Key]struct{}
	start sync.Once
}

// watch registers k, whose lease is held.
func watch(k *Key) {
	watcher.start.Do(func() {
		watcher.keys = map[*Key]struct{}{}
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGIO)
		go func() {
			t := time.NewTicker(leasePoll)
			for {
				select {
				case <-c:
				case <-t.C:
				}
				pollLeases()
			}
		}()
	})
	watcher.mu.Lock()
	watcher.keys[k] = struct{}{}
	watcher.mu.Unlock()
}

// unwatch forgets k.
func unwatch(k *Key) {
	watcher.mu.Lock()
	delete(watcher.keys, k)
	watcher.mu.Unlock()
}

// pollLeases starts the handling of every key whose lease is breaking.
func pollLeases() {
	watcher.mu.Lock()
	keys := make([]*Key, 0, len(watcher.keys))
	for k := range watcher.keys {
		keys = append(keys, k)
	}
	watcher.mu.Unlock()
	for _, k := range keys {
		k.mu.Lock()
		breaking := k.file != nil && !k.lease.breaking && leaseBreaking(k.file)
		if breaking {
			k.lease.breaking = true
		}
		k.mu.Unlock()
		if breaking {
			unwatch(k)
			go k.leaseBroken()
		}
	}
}

// leaseBroken makes k's mapping private when memory allows, tells the
// key's owner, and then releases the lease (so that the owner has acted
// by the time the other process goes on; the owner's Close releases it
// too).
func (k *Key) leaseBroken() {
	l := k.lease
	l.convert.Lock()
	k.mu.Lock()
	data := k.data
	k.mu.Unlock()
	if data == nil {
		l.convert.Unlock()
		return // closed meanwhile: the lease went with the descriptor
	}
	copying.Lock() // one copy at a time: each sees the memory the last one took
	err := fitsInMemory(len(data))
	if err == nil {
		err = makePrivate(data)
	}
	copying.Unlock()
	var changed error
	if err == nil {
		changed = fmt.Errorf("%w: another process opened it for writing or truncated it; the key reads a private copy of the %d bytes mapped (as verified when loaded)", ErrChanged, len(data))
	} else {
		changed = fmt.Errorf("%w: another process opened it for writing or truncated it; the key still reads the file (no private copy: %v): close it once its readers end; one still reading after the lease-break time (/proc/sys/fs/lease-break-time) can fault", ErrChanged, err)
	}
	k.mu.Lock()
	l.changed, l.private = &Error{Path: k.Path, Err: changed}, err == nil
	k.mu.Unlock()
	l.convert.Unlock()
	l.onBreak(k)
	if err != nil {
		return // the lease stays until Close
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.file == nil {
		return // closed by onBreak: the lease went with the descriptor
	}
	if rerr := releaseLease(k.file); rerr != nil {
		l.changed = &Error{Path: k.Path, Err: errors.Join(changed, fmt.Errorf("release the lease (the other process waits for the lease-break time): %w", rerr))}
	}
}

// copying serializes the private copies of keys whose leases break
// together (each copy uses every core already).
var copying sync.Mutex

// forcePrivateErr, when set (by tests), is why no private copy is made.
var forcePrivateErr error

// fitsInMemory reports why a private copy of n bytes should not be made:
// MemAvailable must keep a tenth of MemTotal beside it.
func fitsInMemory(n int) error {
	if forcePrivateErr != nil {
		return forcePrivateErr
	}
	avail, total, err := meminfo()
	if err != nil {
		return err
	}
	if uint64(n) > avail || avail-uint64(n) < total/10 {
		return fmt.Errorf("%d bytes would leave too little of MemAvailable (%d of %d bytes)", n, avail, total)
	}
	return nil
}

// meminfo reads MemAvailable and MemTotal from /proc/meminfo, in bytes.
func meminfo() (avail, total uint64, err error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		name, rest, ok := strings.Cut(s.Text(), ":")
		if !ok || (name != "MemAvailable" && name != "MemTotal") {
			continue
		}
		kb, perr := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if perr != nil {
			return 0, 0, fmt.Errorf("/proc/meminfo: %s: %w", name, perr)
		}
		if name == "MemAvailable" {
			avail = kb << 10
		} else {
			total = kb << 10
		}
	}
	if err := s.Err(); err != nil {
		return 0, 0, fmt.Errorf("/proc/meminfo: %w", err)
	}
	if avail == 0 || total == 0 {
		return 0, 0, errors.New("/proc/meminfo: no MemAvailable or MemTotal")
	}
	return avail, total, nil
}

// makePrivate replaces the file mapping data with anonymous memory holding
// the same bytes, at the same addresses, read-only: the copy is made
// beside it (on every core), then mremap moves it over the mapping, which
// unmaps the file's pages in the same call. A reader faulting meanwhile
// waits for the call and finds the copy.
func makePrivate(data []byte) error {
	page := uintptr(os.Getpagesize())
	size := (uintptr(len(data)) + page - 1) &^ (page - 1)
	anon, err := unix.MmapPtr(-1, 0, nil, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return fmt.Errorf("mmap %d bytes for a private copy: %w", size, err)
	}
	dst := unsafe.Slice((*byte)(anon), len(data))
	if err := copyGuarded(dst, data); err != nil {
		_ = unix.MunmapPtr(anon, size) // the fault is the error to report
		return err
	}
	if err := unix.Mprotect(unsafe.Slice((*byte)(anon), size), unix.PROT_READ); err != nil {
		_ = unix.MunmapPtr(anon, size)
		return fmt.Errorf("mprotect the private copy: %w", err)
	}
	to := unsafe.Pointer(unsafe.SliceData(data))
	got, err := unix.MremapPtr(anon, size, to, size, unix.MREMAP_MAYMOVE|unix.MREMAP_FIXED)
	if err != nil {
		_ = unix.MunmapPtr(anon, size)
		return fmt.Errorf("mremap the private copy over the mapping: %w", err)
	}
	if got != to {
		return fmt.Errorf("mremap moved the private copy to %p, not %p", got, to)
	}
	return nil
}

// copyGuarded copies src to dst on every core, with faults turned into an
// error (a file system failing under the read).
func copyGuarded(dst, src []byte) error {
	const piece = 64 << 20
	n := (len(src) + piece - 1) / piece
	workers := min(runtime.GOMAXPROCS(0), n)
	next := make(chan int, n)
	for i := range n {
		next <- i * piece
	}
	close(next)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			errs[w] = guardFaults(func() {
				for off := range next {
					end := min(off+piece, len(src))
					copy(dst[off:end], src[off:end])
				}
			})
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
