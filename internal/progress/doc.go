// Package progress keeps a long step from running silently: a Ticker says
// what is running and for how long, as a line after every interval without
// one (10 s by default, so that no silence reaches 15 s) where the output
// is a file or a pipe, or as one live line rewritten every second on a
// terminal, cleared when the step ends.
//
// Its Writer passes a child process's lines, and its Logger a library's
// progress log, between the reports. It uses only the standard library. A
// Ticker is safe for concurrent use.
package progress
