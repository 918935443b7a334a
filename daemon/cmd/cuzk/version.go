package main

import (
	"context"
	"flag"

	"github.com/cuzk-dev/cuzk/internal/buildinfo"
)

var versionCommand = &command{name: "version", setup: setupVersion,
	summary: "this binary's version, source commit and Go release",
	detail:  `Prints this binary's version, source commit and Go release (-o json or -json: one object).`}

func setupVersion(fs *flag.FlagSet) runFunc {
	asJSON := fs.Bool("json", false, "the same as -o json (as cuzk-daemon version -json)")
	return func(_ context.Context, e *env, args []string) error {
		out := e.out
		if err := noArgs(args); err != nil {
			return err
		}
		info := buildinfo.Get()
		if out.json || *asJSON {
			return out.value(info)
		}
		out.text("cuzk %s", info)
		return nil
	}
}
