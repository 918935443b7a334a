package structflag

import (
	"flag"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/stats"
)

type cfg struct {
	Listen  string        `mapstructure:"listen" help:"address"`
	Public  bool          `mapstructure:"http_public" help:"serve to anyone"`
	Queue   int           `mapstructure:"queue_size" help:"queued jobs"`
	Seed    uint64        `mapstructure:"dev_key_seed" help:"seed"`
	Budget  stats.Bytes   `mapstructure:"host_budget" help:"bytes"`
	Limit   int64         `mapstructure:"memory_limit" help:"plain bytes"`
	Drain   time.Duration `mapstructure:"drain_timeout" help:"drain"`
	GPUs    []int         `mapstructure:"gpus" help:"ordinals"`
	private int
}

func TestDefineBindsEveryFieldWithItsDefault(t *testing.T) {
	c := cfg{Listen: "127.0.0.1:1", Queue: 8, Drain: time.Minute}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fields, err := Define(fs, &c)
	require.NoError(t, err)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	assert.ElementsMatch(t, []string{"listen", "http-public", "queue-size", "dev-key-seed", "host-budget", "memory-limit",
		"drain-timeout", "gpus"}, names)
	assert.Equal(t, "127.0.0.1:1", fs.Lookup("listen").DefValue)
	assert.Equal(t, "1m0s", fs.Lookup("drain-timeout").DefValue)

	require.NoError(t, fs.Parse([]string{"-host-budget", "1.5GiB", "-gpus", "0, 2", "-queue-size", "3", "-http-public"}))
	assert.Equal(t, stats.Bytes(3<<29), c.Budget, "units are read exactly")
	assert.Equal(t, []int{0, 2}, c.GPUs)
	assert.Equal(t, 3, c.Queue)
	assert.True(t, c.Public)
	assert.Equal(t, map[string]any{"host_budget": stats.Bytes(3 << 29), "gpus": []int{0, 2}, "queue_size": 3, "http_public": true},
		Set(fs, fields, &c), "only the flags given, typed")
}

func TestBadValuesNameTheFlag(t *testing.T) {
	for _, args := range [][]string{{"-host-budget", "12 apples"}, {"-gpus", "0,x"}, {"-queue-size", "many"}} {
		c := cfg{}
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		_, err := Define(fs, &c)
		require.NoError(t, err)
		err = fs.Parse(args)
		require.Error(t, err, "%v", args)
		assert.Contains(t, err.Error(), strings.TrimPrefix(args[0], "-"), "the error names the flag")
	}
}

func TestFieldsRefusesUndocumentedAndUnsupportedFields(t *testing.T) {
	type noHelp struct {
		A string `mapstructure:"a"`
	}
	type noKey struct {
		A string `help:"a"`
	}
	type badType struct {
		A map[string]int `mapstructure:"a" help:"a"`
	}
	for _, v := range []any{noHelp{}, noKey{}, badType{}} {
		_, err := Fields(reflect.TypeOf(v))
		assert.Error(t, err, "%T", v)
	}
	_, err := Define(flag.NewFlagSet("t", flag.ContinueOnError), cfg{})
	assert.ErrorContains(t, err, "pointer to a struct")
	keys, err := Keys(reflect.TypeOf(cfg{}))
	require.NoError(t, err)
	assert.Len(t, keys, 8)
	assert.True(t, keys["host_budget"])
}

// TestFileValuesGoThroughTheFlags: a decoded file value is set through the
// flag's own parser, so a bare 600 is no duration, 0.5 no size, and 1e30
// reaches the size parser as the number it is; errors name key and value.
func TestFileValuesGoThroughTheFlags(t *testing.T) {
	c := cfg{Drain: time.Minute}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fields, err := Define(fs, &c)
	require.NoError(t, err)
	for _, tc := range []struct {
		key  string
		v    any
		want string
	}{
		{"drain_timeout", 600, "missing unit"},
		{"drain_timeout", int64(600), "600s or 10m"},
		{"host_budget", 0.5, "needs a unit"},
		{"host_budget", 64, "needs a unit"},
		{"host_budget", 1e30, "more than an int64 holds"},
		{"queue_size", 1.5, "queue_size"},
		{"gpus", map[string]any{"a": 1}, "not a value"},
	} {
		text, err := Text(tc.v)
		if err == nil {
			err = SetKey(fs, fields, tc.key, text)
		}
		require.Error(t, err, "%s: %v", tc.key, tc.v)
		assert.Contains(t, err.Error(), tc.want, "%s: %v", tc.key, tc.v)
		if _, table := tc.v.(map[string]any); !table {
			assert.Contains(t, err.Error(), tc.key+`: "`+text+`"`, "the error names the key and the value")
		}
	}
	assert.Equal(t, time.Minute, c.Drain, "a refused value changes nothing")
	for key, v := range map[string]any{"drain_timeout": "600s", "host_budget": "1.5GiB", "gpus": []any{0, 2}, "queue_size": int64(3),
		"http_public": true, "memory_limit": 4096} {
		text, err := Text(v)
		require.NoError(t, err)
		require.NoError(t, SetKey(fs, fields, key, text), key)
	}
	assert.Equal(t, cfg{Drain: 600 * time.Second, Budget: stats.Bytes(3 << 29), GPUs: []int{0, 2}, Queue: 3, Public: true, Limit: 4096}, c)
	assert.ErrorContains(t, SetKey(fs, fields, "nope", "1"), "nope: unknown setting")
}
