package cli_test

import (
	"fmt"
	"os"

	"github.com/cuzk-dev/cuzk/internal/cli"
)

func Example() {
	args := []string{"help", "version"} // as typed after the program's name
	name, rest := cli.Subcommand(args)  // "version", [-h]
	fs := cli.NewFlagSet("prog", name, "[-json]", "Prints this binary's version.", os.Stderr)
	fs.Bool("json", false, "print one JSON object")
	code, stop := cli.Parse(fs, rest, os.Stdout)
	if stop {
		fmt.Println("exit status", code)
	}
	// Output:
	// usage: prog version [-json]
	//
	// Prints this binary's version.
	//
	// flags:
	//   -json
	//     	print one JSON object
	// exit status 0
}
