package signals

import (
	"os"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryDeliveryArrives: signals sent one after another, each once the
// kernel has delivered the one before, while every processor is busy,
// all arrive, in order, however late the reader runs.
func TestEveryDeliveryArrives(t *testing.T) {
	if !handler {
		t.Skip("SKIP (visible): no C handler in this build (Linux with cgo only); os/signal merges signals")
	}
	other := make(chan os.Signal, 1)
	require.NoError(t, Notify(other, syscall.SIGUSR1, syscall.SIGUSR2))
	c := make(chan os.Signal, 64)
	require.NoError(t, Notify(c, syscall.SIGUSR1, syscall.SIGUSR2), "routed again, to c")
	defer Stop(c)

	var stop atomic.Bool
	for range 4 * runtime.GOMAXPROCS(0) { // keep every P busy: os/signal's goroutine would wait for one
		go func() {
			x := 0
			for !stop.Load() {
				x++
			}
			_ = x
		}()
	}
	defer stop.Store(true)
	want := []os.Signal{syscall.SIGUSR1, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGUSR1, syscall.SIGUSR1}
	for _, s := range want {
		require.NoError(t, syscall.Kill(os.Getpid(), s.(syscall.Signal)))
		time.Sleep(time.Millisecond) // the kernel delivers it (its handler runs) before the next
	}
	var got []os.Signal
	deadline := time.After(time.Minute)
	for len(got) < len(want) {
		select {
		case s := <-c:
			got = append(got, s)
		case <-deadline:
			t.Fatalf("got %v of %v", got, want)
		}
	}
	assert.Equal(t, want, got)
	assert.Empty(t, other, "a signal routed again goes to the new channel only")
}
