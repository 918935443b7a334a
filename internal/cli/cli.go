package cli

// Exit codes every command shares. A command adds its own above these
// (cuzk-bench and cuzk-daemon: 3, no GPU).
const (
	ExitOK    = 0 // success, and help that was asked for
	ExitFail  = 1 // the command ran and failed
	ExitUsage = 2 // the command line is wrong: bad flag, argument or command
)

// IsHelp reports whether args ask for help: "help" alone, or -h, -help or
// --help anywhere before a "--".
func IsHelp(args []string) bool {
	if len(args) == 1 && args[0] == "help" {
		return true
	}
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// Subcommand splits a command line into the subcommand's name and its
// arguments. A lone -h, -help, --help or help, or help followed by one of
// those, is the name "help" with no arguments (the command's usage);
// "help CMD ..." is CMD with -h (CMD's own help); no arguments at all is
// the name "".
func Subcommand(args []string) (name string, rest []string) {
	switch {
	case len(args) == 0:
		return "", nil
	case args[0] == "help" && len(args) > 1 && !helpWord(args[1]):
		return args[1], []string{"-h"}
	case helpWord(args[0]):
		return "help", nil
	}
	return args[0], args[1:]
}

func helpWord(s string) bool {
	return s == "-h" || s == "-help" || s == "--help" || s == "help"
}
