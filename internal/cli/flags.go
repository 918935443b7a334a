package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// FlagSet is a subcommand's flags and the text of its help:
//
//	usage: PROG NAME SYNOPSIS
//
//	SUMMARY
//
//	flags:
//	  -flag ...
//
// without the summary and the "flags:" line when the summary is empty, and
// without "flags:" when there are no flags. Its Usage prints that text on
// the flag set's output (stderr, where a bad flag is reported), or a
// one-line pointer to -h after HintOnError; Parse prints the whole text on
// stdout when help is asked.
type FlagSet struct {
	*flag.FlagSet
	prog, synopsis, summary string
	hint                    bool
}

// NewFlagSet returns the flag set of the subcommand name of the program
// prog, reporting errors on stderr. synopsis follows the name on the usage
// line ("[flags]", "[-json]", "<name>.pk <name>.rawpk"); summary is the
// paragraph below it.
func NewFlagSet(prog, name, synopsis, summary string, stderr io.Writer) *FlagSet {
	fs := &FlagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), prog: prog, synopsis: synopsis, summary: summary}
	fs.SetOutput(stderr)
	fs.Usage = func() {
		if fs.hint {
			fmt.Fprintf(fs.Output(), "run \"%s %s -h\" for its flags\n", fs.prog, fs.Name())
			return
		}
		fs.PrintUsage(fs.Output())
	}
	return fs
}

// HintOnError makes Usage, which the flag package calls after a bad flag,
// print a line pointing to -h instead of the whole help: the flag
// package's message says what was wrong, and long help would bury it.
func (fs *FlagSet) HintOnError() { fs.hint = true }

// PrintUsage writes the whole help text to w.
func (fs *FlagSet) PrintUsage(w io.Writer) {
	line := "usage: " + fs.prog + " " + fs.Name()
	if fs.synopsis != "" {
		line += " " + fs.synopsis
	}
	fmt.Fprintln(w, line)
	hasFlags := false
	fs.VisitAll(func(*flag.Flag) { hasFlags = true })
	if fs.summary != "" {
		fmt.Fprintf(w, "\n%s\n", fs.summary)
		if hasFlags {
			fmt.Fprint(w, "\nflags:\n")
		}
	}
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// Parse parses args into fs. When args ask for help (IsHelp), it prints
// the help on stdout and returns ExitOK, as it does for a form of -help
// that only the flag package knows (-help=true: Usage on stderr); for a
// bad flag (the flag package reported it on stderr) it returns ExitUsage. stop is true in both cases: the command
// should return code; otherwise it goes on with fs.Args().
func Parse(fs *FlagSet, args []string, stdout io.Writer) (code int, stop bool) {
	if IsHelp(args) {
		fs.PrintUsage(stdout)
		return ExitOK, true
	}
	err := fs.FlagSet.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return ExitOK, true
	case err != nil:
		return ExitUsage, true
	}
	return ExitOK, false
}
