// Package structflag makes a command's flags from its configuration struct,
// so that the struct is the one description of every setting: each exported
// field with a `mapstructure:"key"` tag (the key of the config file and of
// the environment) becomes the flag -key (underscores as dashes), bound to
// the field, with the field's `help:"…"` tag as its usage and the field's
// value as its default.
//
// Field types: string, bool, int, int64, uint64, time.Duration (with a
// unit: 600 is refused, 600s is not), []int (a comma-separated list), and
// any type whose pointer implements flag.Value (stats.Bytes: sizes with
// units, as in 64GiB).
//
// The flags are the one parser of the settings: a config file's and the
// environment's values go through the same flag.Value (SetKey, with Text
// turning a decoded YAML or TOML value into the text a flag reads), so 600
// means the same, or is refused the same way, wherever it is written.
package structflag

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Field is one setting of a configuration struct.
type Field struct {
	Key   string // the mapstructure key: "host_budget"
	Flag  string // the flag's name: "host-budget"
	Help  string // the help tag
	index int
}

// Fields lists the settings of the struct type t, in field order. Every
// exported field must have a mapstructure key and a help text.
func Fields(t reflect.Type) ([]Field, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("structflag: %s is not a struct", t)
	}
	var out []Field
	var errs []error
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key, help := f.Tag.Get("mapstructure"), f.Tag.Get("help")
		if key == "" || key == "-" || help == "" {
			errs = append(errs, fmt.Errorf("structflag: %s.%s needs a mapstructure key and a help tag", t.Name(), f.Name))
			continue
		}
		if !supported(f.Type) {
			errs = append(errs, fmt.Errorf("structflag: %s.%s: type %s has no flag form", t.Name(), f.Name, f.Type))
			continue
		}
		out = append(out, Field{Key: key, Flag: strings.ReplaceAll(key, "_", "-"), Help: help, index: i})
	}
	return out, errors.Join(errs...)
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	intsType     = reflect.TypeFor[[]int]()
	valueType    = reflect.TypeFor[flag.Value]()
)

func supported(t reflect.Type) bool {
	if reflect.PointerTo(t).Implements(valueType) || t == durationType || t == intsType {
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Uint64:
		return true
	}
	return false
}

// Define adds a flag per setting of *cfg to fs, bound to the field: parsing
// fs writes into cfg. The defaults shown in help are cfg's values.
func Define(fs *flag.FlagSet, cfg any) ([]Field, error) {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("structflag: Define wants a pointer to a struct, got %T", cfg)
	}
	fields, err := Fields(v.Elem().Type())
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		fv := v.Elem().Field(f.index)
		p := fv.Addr().Interface()
		switch x := p.(type) {
		case flag.Value:
			fs.Var(x, f.Flag, f.Help)
		case *time.Duration:
			fs.Var((*duration)(x), f.Flag, f.Help)
		case *[]int:
			fs.Var((*intList)(x), f.Flag, f.Help)
		case *string:
			fs.StringVar(x, f.Flag, *x, f.Help)
		case *bool:
			fs.BoolVar(x, f.Flag, *x, f.Help)
		case *int:
			fs.IntVar(x, f.Flag, *x, f.Help)
		case *int64:
			fs.Int64Var(x, f.Flag, *x, f.Help)
		case *uint64:
			fs.Uint64Var(x, f.Flag, *x, f.Help)
		default:
			return nil, fmt.Errorf("structflag: %s: type %s has no flag form", f.Key, fv.Type())
		}
	}
	return fields, nil
}

// Set returns, by key, the values of the settings whose flags were given on
// fs's command line, read from *cfg (the struct Define bound, after
// fs.Parse): typed values, exact as parsed.
func Set(fs *flag.FlagSet, fields []Field, cfg any) map[string]any {
	v := reflect.ValueOf(cfg).Elem()
	byFlag := map[string]Field{}
	for _, f := range fields {
		byFlag[f.Flag] = f
	}
	out := map[string]any{}
	fs.Visit(func(fl *flag.Flag) {
		if f, ok := byFlag[fl.Name]; ok {
			out[f.Key] = v.Field(f.index).Interface()
		}
	})
	return out
}

// Keys are the setting keys of the struct type t.
func Keys(t reflect.Type) (map[string]bool, error) {
	fields, err := Fields(t)
	out := map[string]bool{}
	for _, f := range fields {
		out[f.Key] = true
	}
	return out, err
}

// intList is a []int flag: comma-separated integers.
type intList []int

func (l *intList) String() string {
	if l == nil {
		return ""
	}
	parts := make([]string, len(*l))
	for i, v := range *l {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

func (l *intList) Set(s string) error {
	var out []int
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil {
			return fmt.Errorf("not an integer: %q", p)
		}
		out = append(out, v)
	}
	*l = out
	return nil
}

// SetKey sets the setting key on fs (made by Define) from its text form,
// through the same flag.Value a command-line flag uses. The error names
// the key and the value.
func SetKey(fs *flag.FlagSet, fields []Field, key, value string) error {
	for _, f := range fields {
		if f.Key == key {
			if err := fs.Set(f.Flag, value); err != nil {
				return fmt.Errorf("%s: %q: %w", key, value, err)
			}
			return nil
		}
	}
	return fmt.Errorf("%s: unknown setting", key)
}

// Text is the text a flag would be given for v, a value decoded from a
// YAML or TOML file: strings as they are, numbers in plain decimal (0.5,
// 1000000000000000000000000000000: never an exponent, so a size or a
// duration parser sees the number that was written), booleans, and lists
// joined by commas. A table or anything else is an error.
func Text(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			t, err := Text(e)
			if err != nil {
				return "", err
			}
			parts[i] = t
		}
		return strings.Join(parts, ","), nil
	case []int:
		return (*intList)(&x).String(), nil
	case []string:
		return strings.Join(x, ","), nil
	}
	return "", fmt.Errorf("a %T, not a value", v)
}

// duration is a time.Duration flag that keeps time.ParseDuration's reason
// (a bare 600 has no unit) in its error, where the flag package's own says
// only "parse error".
type duration time.Duration

func (d *duration) String() string {
	if d == nil {
		return "0s"
	}
	return time.Duration(*d).String()
}

func (d *duration) Set(s string) error {
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%w (a duration needs a unit, as in 600s or 10m)", err)
	}
	*d = duration(v)
	return nil
}
