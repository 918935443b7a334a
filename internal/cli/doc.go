// Package cli holds the command-line plumbing that cuzk's commands
// (cuzk-daemon, cuzk, cuzk-bench) share, so that each says the same thing
// the same way: the exit codes, the subcommand's flag set and its help
// text, when arguments ask for help, and "PROG help CMD"; a flag whose
// default is a secret (SecretVar) shows where it comes from, never its value.
//
// Help goes to stdout with exit status 0; a bad flag or argument goes to
// stderr with exit status 2. It uses only the standard library and keeps no
// state of its own: every value is safe to use from one goroutine, as a
// flag.FlagSet is.
package cli
