package main

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/cuzk-dev/cuzk/daemon/assembly"
	"github.com/cuzk-dev/cuzk/internal/structflag"
)

// envPrefix starts the daemon's variables: CUZK_DAEMON_LISTEN, ...
const envPrefix = "CUZK_DAEMON_"

// loadConfig merges, lowest first: defaults, the config file (YAML or
// TOML, by extension; unknown keys are errors naming the key),
// CUZK_DAEMON_* variables (unknown names are errors), then the flags set
// on the command line. The flags are made from assembly.Config's fields.
func loadConfig(args []string, environ []string, out io.Writer) (assembly.Config, error) {
	def := assembly.DefaultConfig()
	keys, err := structflag.Keys(reflect.TypeFor[assembly.Config]())
	if err != nil {
		return assembly.Config{}, err
	}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(out)
	cfgFile := fs.String("config", "", "config file (YAML or TOML)")
	given := def // the flags write here; only those set on the command line are taken
	fields, err := structflag.Define(fs, &given)
	if err != nil {
		return assembly.Config{}, err
	}
	if err := fs.Parse(args); err != nil {
		return assembly.Config{}, fmt.Errorf("serve: %w", err)
	}
	if fs.NArg() > 0 {
		return assembly.Config{}, fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	v := viper.New()
	if err := v.MergeConfigMap(toMap(def)); err != nil {
		return assembly.Config{}, err
	}
	if *cfgFile != "" {
		f := viper.New()
		f.SetConfigFile(*cfgFile)
		if err := f.ReadInConfig(); err != nil {
			return assembly.Config{}, fmt.Errorf("config %s: %w", *cfgFile, err)
		}
		for _, k := range f.AllKeys() {
			if !keys[k] {
				return assembly.Config{}, fmt.Errorf("config %s: unknown key %q (known: %s)", *cfgFile, k, known(keys))
			}
		}
		if err := v.MergeConfigMap(f.AllSettings()); err != nil {
			return assembly.Config{}, fmt.Errorf("config %s: %w", *cfgFile, err)
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
		v.Set(key, val)
	}
	for k, val := range structflag.Set(fs, fields, &given) {
		v.Set(k, val)
	}
	var c assembly.Config
	hook := mapstructure.ComposeDecodeHookFunc(mapstructure.TextUnmarshallerHookFunc(),
		mapstructure.StringToTimeDurationHookFunc(), mapstructure.StringToSliceHookFunc(","))
	if err := v.UnmarshalExact(&c, viper.DecodeHook(hook)); err != nil {
		return assembly.Config{}, fmt.Errorf("config: %w", err)
	}
	return c, nil
}

func toMap(c assembly.Config) map[string]any {
	var m map[string]any
	if err := mapstructure.Decode(c, &m); err != nil {
		panic(err) // a struct of plain fields always decodes into a map
	}
	return m
}

func known(keys map[string]bool) string {
	var ks []string
	for k := range keys {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}
