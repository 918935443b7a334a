// Package progress keeps a long step from running silently: a Ticker says
// what is running and for how long, as a line every interval (15 s by
// default) where the output is a file or a pipe, or as one live line
// rewritten every second on a terminal, cleared when the step ends.
//
// It uses only the standard library. A Ticker is safe for concurrent use.
package progress
