// Package signals delivers every signal the process receives as its own
// event, in order, however soon one follows another.
//
// os/signal cannot promise that: the Go runtime keeps one pending bit per
// signal number until os/signal's goroutine takes it, and under load that
// goroutine waits for a processor (about a second was measured on a busy
// 2-core host), so a second SIGTERM sent meanwhile merges into the first
// and is never seen. Here a C handler (cgo, on Linux) writes one byte per
// delivery to a pipe, which a goroutine reads and forwards: a late reader
// delays a signal but loses none. The kernel still merges two of one
// signal sent before the process has run its handler once, as POSIX
// allows; that window is the kernel's delivery time, not the Go
// scheduler's. Elsewhere Notify falls back to os/signal.
//
// Notify takes the signals from the Go runtime for good: a later
// signal.Notify of the same signals would take them back, and after Stop
// they are received and dropped, not the runtime's default again.
package signals
