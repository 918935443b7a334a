package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
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
//
// Flags may come before or after the arguments, or between them
// ("cuzk await JOB -o json"); everything after "--" is an argument.
func Parse(fs *FlagSet, args []string, stdout io.Writer) (code int, stop bool) {
	if IsHelp(args) {
		fs.PrintUsage(stdout)
		return ExitOK, true
	}
	err := parseInterleaved(fs.FlagSet, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return ExitOK, true
	case err != nil:
		return ExitUsage, true
	}
	return ExitOK, false
}

// parseInterleaved parses the flags in args wherever they stand, and
// leaves the other arguments, in order, as f.Args(). The flag package
// stops at the first argument that is not a flag; this sets that argument
// aside and goes on after it, until the arguments end or a "--" ends the
// flags.
func parseInterleaved(f *flag.FlagSet, args []string) error {
	positional := []string{}
	for {
		if err := f.Parse(args); err != nil {
			return err
		}
		rest := f.Args()
		if used := args[:len(args)-len(rest)]; len(used) > 0 && used[len(used)-1] == "--" {
			positional = append(positional, rest...) // "--" ended the flags
			break
		}
		if len(rest) == 0 {
			break
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
	return f.Parse(append([]string{"--"}, positional...)) // sets no flag: f.Args() is positional
}

// CommandFirst moves the first argument that names a command (isCommand)
// to the front, so that flags may come before the command's name too
// ("cuzk -addr host:9820 status" is "cuzk status -addr host:9820"). Args
// that start with a command, or hold none, come back as they are.
func CommandFirst(args []string, isCommand func(string) bool) []string {
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") || helpWord(args[0]) {
		return args
	}
	for i, a := range args {
		if a == "--" {
			break
		}
		if isCommand(a) {
			return append(append([]string{a}, args[:i]...), args[i+1:]...)
		}
	}
	return args
}
