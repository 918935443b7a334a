package main

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"github.com/cuzk-dev/cuzk/daemon/keys"
	"github.com/cuzk-dev/cuzk/internal/cli"
)

// defaultKeyDir is serve's key directory without a config file:
// CUZK_DAEMON_KEY_DIR (the image sets it), else the default.
func defaultKeyDir(getenv func(string) string) string {
	if d := getenv(envPrefix + "KEY_DIR"); d != "" {
		return d
	}
	return assembly.DefaultConfig().KeyDir
}

// keysCmd manages the key directory: ls lists its keys, rm deletes one
// key's files (production ones only with -force), verify checks every file
// (the .pk beside a used .rawpk too) and says which a load uses.
func keysCmd(args []string, stdout, stderr io.Writer) int {
	fs := cli.NewFlagSet(prog, "keys", "[-key-dir DIR] ls | rm [-force] NAME... | verify [NAME...]", "", stderr)
	usage := fs.Usage
	dir := fs.String("key-dir", defaultKeyDir(os.Getenv), "key directory (default $"+envPrefix+"KEY_DIR, as serve)")
	force := fs.Bool("force", false, "rm: delete production key files too")
	if code, stop := cli.Parse(fs, args, stdout); stop {
		return code
	}
	if fs.NArg() == 0 {
		usage()
		return exitUsage
	}
	sub, names := fs.Arg(0), fs.Args()[1:]
	if err := fs.FlagSet.Parse(names); err != nil { // flags after the subcommand: rm -force NAME
		return exitUsage
	}
	names = fs.Args()
	switch sub {
	case "ls":
		return keysLs(*dir, stdout, stderr)
	case "rm":
		if len(names) == 0 {
			usage()
			return exitUsage
		}
		code := exitOK
		for _, n := range names {
			paths, err := keys.RemoveKey(*dir, n, *force)
			for _, p := range paths {
				fmt.Fprintln(stdout, "removed", p)
			}
			if err != nil {
				fmt.Fprintln(stderr, "cuzk-daemon keys rm:", err)
				code = exitFail
			}
		}
		return code
	case "verify":
		return keysVerify(*dir, names, stdout, stderr)
	}
	fmt.Fprintf(stderr, "cuzk-daemon keys: unknown subcommand %q\n", sub)
	usage()
	return exitUsage
}

func keysLs(dir string, stdout, stderr io.Writer) int {
	all, err := keys.ListDir(dir)
	if err != nil {
		fmt.Fprintln(stderr, "cuzk-daemon keys ls:", err)
		return exitFail
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tBYTES\tLAST USED\tFILES")
	var total int64
	for _, k := range all {
		kind := "production"
		if k.Development {
			kind = "development"
		}
		total += k.Bytes
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\n", k.Name, kind, k.Bytes, k.LastUsed.Format(time.RFC3339), len(k.Paths))
	}
	fmt.Fprintf(tw, "total\t\t%d\t\t\n", total)
	_ = tw.Flush() // stdout: nothing to do about a failed write
	return exitOK
}

func keysVerify(dir string, names []string, stdout, stderr io.Writer) int {
	all, err := keys.ListDir(dir)
	if err != nil {
		fmt.Fprintln(stderr, "cuzk-daemon keys verify:", err)
		return exitFail
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	code, found := exitOK, map[string]bool{}
	for _, k := range all {
		if len(want) > 0 && !want[k.Name] {
			continue
		}
		found[k.Name] = true
		for _, c := range keys.VerifyKey(k) {
			use := "used"
			if !c.Used {
				use = "not used (a .rawpk is)"
			}
			if c.Err != nil {
				fmt.Fprintf(stdout, "DAMAGED  %s (%s): %v\n", c.Path, use, c.Err)
				code = exitFail
				continue
			}
			fmt.Fprintf(stdout, "ok       %s (%s)\n", c.Path, use)
		}
	}
	for n := range want {
		if found[n] {
			continue
		}
		fmt.Fprintf(stderr, "cuzk-daemon keys verify: no key %q in %s\n", n, dir)
		code = exitFail
	}
	return code
}
