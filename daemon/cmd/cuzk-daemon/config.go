package main

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/viper"

	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"github.com/cuzk-dev/cuzk/daemon/env"
	"github.com/cuzk-dev/cuzk/internal/structflag"
)

// envPrefix starts the daemon's variables: CUZK_DAEMON_LISTEN, ...
const envPrefix = env.Prefix

// loadConfig merges, lowest first: defaults, the config file (YAML or
// TOML, by extension; unknown keys are errors naming the key),
// CUZK_DAEMON_* variables (unknown names are errors), then the flags set
// on the command line. The flags are made from assembly.Config's fields,
// and they are the one parser: a file's or a variable's value is set
// through its flag (structflag.SetKey), so a bare 600 is refused as a
// duration and 64 as a size wherever it is written. The result is checked
// (assembly.Config.Check): every refusal names the key and the value.
func loadConfig(args []string, environ []string, out io.Writer) (assembly.Config, error) {
	keys, err := structflag.Keys(reflect.TypeFor[assembly.Config]())
	if err != nil {
		return assembly.Config{}, err
	}
	c := assembly.DefaultConfig()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(out)
	cfgFile := fs.String("config", "", "config file (YAML or TOML)")
	fields, err := structflag.Define(fs, &c)
	if err != nil {
		return assembly.Config{}, err
	}
	// A first parse finds -config and refuses a bad flag before any file is read.
	if err := fs.Parse(args); err != nil {
		return assembly.Config{}, fmt.Errorf("serve: %w", err)
	}
	if fs.NArg() > 0 {
		return assembly.Config{}, fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	c = assembly.DefaultConfig() // the flags stay bound to c: file and variables go under them
	if *cfgFile != "" {
		f := viper.New()
		f.SetConfigFile(*cfgFile)
		if err := f.ReadInConfig(); err != nil {
			return assembly.Config{}, fmt.Errorf("config %s: %w", *cfgFile, err)
		}
		all := f.AllKeys()
		sort.Strings(all)
		for _, k := range all {
			if !keys[k] {
				return assembly.Config{}, fmt.Errorf("config %s: unknown key %q (known: %s)", *cfgFile, k, known(keys))
			}
			text, err := structflag.Text(f.Get(k))
			if err == nil {
				err = structflag.SetKey(fs, fields, k, text)
			} else {
				err = fmt.Errorf("%s: %w", k, err)
			}
			if err != nil {
				return assembly.Config{}, fmt.Errorf("config %s: %w", *cfgFile, err)
			}
		}
	}
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		key, ok := strings.CutPrefix(name, envPrefix)
		if !ok {
			continue
		}
		key = strings.ToLower(key)
		if !keys[key] {
			return assembly.Config{}, fmt.Errorf("environment: unknown variable %s (known: %s)", name, known(keys))
		}
		if err := structflag.SetKey(fs, fields, key, val); err != nil {
			return assembly.Config{}, fmt.Errorf("environment: %s: %w", name, err)
		}
	}
	if err := fs.Parse(args); err != nil { // the flags given, over file and variables
		return assembly.Config{}, fmt.Errorf("serve: %w", err)
	}
	if err := c.Check(); err != nil {
		return assembly.Config{}, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

func known(keys map[string]bool) string {
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
