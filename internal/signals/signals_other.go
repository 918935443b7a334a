//go:build !linux || !cgo

package signals

import (
	"os"
	"os/signal"
	"syscall"
)

// handler reports that this build delivers signals through the C handler.
const handler = false

// Notify is signal.Notify here: a signal that arrives while another of its
// number is pending in the Go runtime merges with it.
func Notify(c chan<- os.Signal, sigs ...syscall.Signal) error {
	list := make([]os.Signal, len(sigs))
	for i, s := range sigs {
		list[i] = s
	}
	signal.Notify(c, list...)
	return nil
}

// Stop is signal.Stop.
func Stop(c chan<- os.Signal) { signal.Stop(c) }
