//go:build linux && cgo

package signals

/*
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static int cuzk_signals_fd = -1;

// One byte per delivery; write(2) is async-signal-safe. The pipe does not
// block (a full one, 64 KiB of unread signals, drops the byte).
static void cuzk_signals_handler(int sig) {
	int saved = errno;
	unsigned char b = (unsigned char)sig;
	ssize_t n = write(cuzk_signals_fd, &b, 1);
	(void)n;
	errno = saved;
}

static int cuzk_signals_install(int sig, int fd) {
	struct sigaction sa;
	cuzk_signals_fd = fd;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = cuzk_signals_handler;
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, NULL) == 0 ? 0 : errno;
}
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// handler reports that this build delivers signals through the C handler.
const handler = true

var (
	mu        sync.Mutex
	pipeW     *os.File // the handler's end; never closed
	routes    = map[syscall.Signal]chan<- os.Signal{}
	installed = map[syscall.Signal]bool{}
)

// Notify sends each delivery of sigs to c, in order (see the package
// comment); a signal routed before goes to c from now on. c should be
// buffered: a reader that falls behind holds up later signals, never drops
// them.
func Notify(c chan<- os.Signal, sigs ...syscall.Signal) error {
	mu.Lock()
	defer mu.Unlock()
	if pipeW == nil {
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("signals: %w", err)
		}
		if err := syscall.SetNonblock(int(w.Fd()), true); err != nil {
			return fmt.Errorf("signals: %w", err)
		}
		pipeW = w
		go forward(r)
	}
	for _, s := range sigs {
		if !installed[s] {
			if errno := C.cuzk_signals_install(C.int(s), C.int(pipeW.Fd())); errno != 0 {
				return fmt.Errorf("signals: sigaction %v: %w", s, syscall.Errno(errno))
			}
			installed[s] = true
		}
		routes[s] = c
	}
	return nil
}

// Stop routes no more signals to c: they are then received and dropped
// (the handler stays; the Go runtime's default, ending the process, does
// not come back).
func Stop(c chan<- os.Signal) {
	mu.Lock()
	defer mu.Unlock()
	for s, r := range routes {
		if r == c {
			delete(routes, s)
		}
	}
}

// forward reads the deliveries the handler wrote and sends each to its
// channel.
func forward(r *os.File) {
	buf := make([]byte, 64)
	for {
		n, err := r.Read(buf)
		if err != nil {
			return // the write end is never closed: not reached
		}
		for _, b := range buf[:n] {
			s := syscall.Signal(b)
			mu.Lock()
			c := routes[s]
			mu.Unlock()
			if c != nil {
				c <- s
			}
		}
	}
}
