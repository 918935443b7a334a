package main

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/spf13/viper"

	"github.com/cuzk-dev/cuzk/daemon/server"
)

// envPrefix starts the daemon's variables: CUZK_DAEMON_LISTEN, ...
const envPrefix = "CUZK_DAEMON_"

// loadOptions merges, lowest first: defaults, the config file (YAML or
// TOML, by extension; unknown keys are errors naming the key),
// CUZK_DAEMON_* variables (unknown names are errors), then the flags set
// on the command line.
func loadOptions(args []string, environ []string, out io.Writer) (server.Options, error) {
	def := server.DefaultOptions()
	keys := optionKeys()
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(out)
	cfgFile := fs.String("config", "", "config file (YAML or TOML)")
	defineFlags(fs, def)
	if err := fs.Parse(args); err != nil {
		return server.Options{}, fmt.Errorf("serve: %w", err)
	}
	if fs.NArg() > 0 {
		return server.Options{}, fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	v := viper.New()
	if err := v.MergeConfigMap(toMap(def)); err != nil {
		return server.Options{}, err
	}
	if *cfgFile != "" {
		f := viper.New()
		f.SetConfigFile(*cfgFile)
		if err := f.ReadInConfig(); err != nil {
			return server.Options{}, fmt.Errorf("config %s: %w", *cfgFile, err)
		}
		for _, k := range f.AllKeys() {
			if !keys[k] {
				return server.Options{}, fmt.Errorf("config %s: unknown key %q (known: %s)", *cfgFile, k, known(keys))
			}
		}
		if err := v.MergeConfigMap(f.AllSettings()); err != nil {
			return server.Options{}, fmt.Errorf("config %s: %w", *cfgFile, err)
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
			return server.Options{}, fmt.Errorf("environment: unknown variable %s (known: %s)", name, known(keys))
		}
		v.Set(key, val)
	}
	var err error
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "config" || err != nil {
			return
		}
		v.Set(strings.ReplaceAll(f.Name, "-", "_"), f.Value.String())
	})
	var o server.Options
	hook := mapstructure.ComposeDecodeHookFunc(mapstructure.StringToTimeDurationHookFunc(), mapstructure.StringToSliceHookFunc(","))
	if err := v.UnmarshalExact(&o, viper.DecodeHook(hook)); err != nil {
		return server.Options{}, fmt.Errorf("config: %w", err)
	}
	return o, nil
}

// defineFlags adds a flag per option, named after its key with dashes.
func defineFlags(fs *flag.FlagSet, def server.Options) {
	fs.String("listen", def.Listen, "gRPC address: unix:PATH or host:port")
	fs.String("http-listen", def.HTTPListen, "HTTP address for /metrics, /healthz, /readyz (\"\" disables)")
	fs.Bool("http-public", false, "serve /metrics, /healthz, /readyz to anyone, without the token (needed off loopback with no token)")
	fs.String("token", "", "bearer token clients must send (required off loopback; HTTP asks for it on /metrics, not on the probes /healthz and /readyz)")
	fs.String("token-file", "", "file holding the bearer token")
	fs.String("tls-cert", "", "TLS certificate file")
	fs.String("tls-key", "", "TLS key file")
	fs.Int("max-message-bytes", def.MaxMessageBytes, "gRPC message limit")
	fs.String("backend", def.Backend, "auto (GPUs, else CPU), gpu or cpu")
	fs.Var(&intList{}, "gpus", "GPU ordinals to use, comma separated (default all)")
	fs.String("key-dir", def.KeyDir, "key directory")
	fs.Uint64("dev-key-seed", def.DevKeySeed, "seed of development key setups")
	fs.Bool("no-dev-keys", false, "refuse development keys: only key files in key-dir")
	fs.Bool("dev-keys-in-memory", false, "keep generated development keys in memory only (write no key files)")
	fs.Bool("release-host-keys", false, "with one GPU, give a key's host memory back once the GPU holds it")
	fs.Int64("host-key-budget", 0, "bytes of warm keys (0: host-budget)")
	fs.Int64("key-dir-budget", 0, "bytes of key files in key-dir; least recently used development keys are deleted past it (0: no bound)")
	fs.Int64("gpu-key-budget", 0, "bytes of hot keys per GPU (0: no bound)")
	fs.Int64("host-job-budget", 0, "bytes of synthesized jobs in flight (0: host-budget)")
	fs.Int64("host-budget", 0, "bytes one request may need at its peak; the key and job budgets' default (0: the machine's memory less a margin)")
	fs.Int("queue-size", def.QueueSize, "queued jobs before ResourceExhausted")
	fs.Int("synthesizers", 0, "jobs synthesized at once (0: one per core)")
	fs.Int("synthesis-workers", 0, "goroutines per synthesis (0: cores / synthesizers)")
	fs.Int("handoff", 0, "synthesized jobs waiting for a device (0: two per device)")
	fs.Duration("drain-timeout", def.DrainTimeout, "how long SIGTERM lets running jobs finish")
	fs.Int64("memory-limit", 0, "Go soft memory limit in bytes (0: GOMEMLIMIT, else the host budget)")
}

// optionKeys are the config keys of server.Options.
func optionKeys() map[string]bool {
	out := map[string]bool{}
	t := reflect.TypeOf(server.Options{})
	for i := range t.NumField() {
		out[t.Field(i).Tag.Get("mapstructure")] = true
	}
	return out
}

func toMap(o server.Options) map[string]any {
	var m map[string]any
	if err := mapstructure.Decode(o, &m); err != nil {
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

// intList is a comma-separated list of ints as a flag.
type intList []int

func (l *intList) String() string {
	parts := make([]string, len(*l))
	for i, v := range *l {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

func (l *intList) Set(s string) error {
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return fmt.Errorf("not a GPU ordinal: %q", p)
		}
		*l = append(*l, v)
	}
	return nil
}
