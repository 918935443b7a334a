package stats

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Binary byte units.
const (
	KiB int64 = 1 << (10 * (iota + 1))
	MiB
	GiB
	TiB
	PiB
	EiB
)

// units are the suffixes ParseBytes accepts, by lower-case name: IEC binary
// units, SI decimal units and a bare byte.
var units = map[string]int64{
	"b":   1,
	"kib": KiB, "mib": MiB, "gib": GiB, "tib": TiB, "pib": PiB, "eib": EiB,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15, "eb": 1e18,
}

// ErrSize is wrapped by every error ParseBytes and ParseCount return.
var ErrSize = errors.New("bad size")

// ParseBytes reads a byte count: a number with an optional unit, as in 64GiB,
// 1.5 GiB, 512MiB, 10GB or 4096. Binary units (KiB, MiB, GiB, TiB, PiB, EiB)
// count powers of 1024, decimal ones (kB, MB, GB, TB, PB, EB) powers of 1000,
// and B or no unit bytes; units ignore case. Bare K, M or G are refused as
// ambiguous. A fraction is allowed where the result is a whole number of
// bytes; the result must be at least 0 and fit an int64.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	if num == "" {
		return 0, fmt.Errorf("%w %q: want a number with an optional unit, as in 64GiB", ErrSize, s)
	}
	mult := int64(1)
	if unit != "" {
		m, ok := units[strings.ToLower(unit)]
		if !ok {
			return 0, fmt.Errorf("%w %q: unit %q is none of B, KiB, MiB, GiB, TiB, PiB, EiB, kB, MB, GB, TB, PB, EB", ErrSize, s, unit)
		}
		mult = m
	}
	if whole, err := strconv.ParseInt(num, 10, 64); err == nil {
		if whole > math.MaxInt64/mult {
			return 0, fmt.Errorf("%w %q: more than an int64 holds", ErrSize, s)
		}
		return whole * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%w %q: want a number with an optional unit, as in 64GiB", ErrSize, s)
	}
	v := f * float64(mult)
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("%w %q: more than an int64 holds", ErrSize, s)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("%w %q: not a whole number of bytes", ErrSize, s)
	}
	return int64(v), nil
}

// FormatBytes writes b in the largest binary unit it reaches: "1.50 GiB",
// "12.0 MiB", "3.5 KiB", "512 B" (two decimals for GiB and above one).
func FormatBytes(b int64) string {
	a := b
	if a < 0 {
		a = -a
	}
	switch {
	case a >= GiB:
		return FormatGiB(b)
	case a >= MiB:
		return fmt.Sprintf("%.1f MiB", float64(b)/float64(MiB))
	case a >= KiB:
		return fmt.Sprintf("%.1f KiB", float64(b)/float64(KiB))
	default:
		return fmt.Sprintf("%d B", b)
	}
}

// FormatGiB writes b in GiB with two decimals ("0.25 GiB"), for columns that
// compare sizes in one unit.
func FormatGiB(b int64) string { return fmt.Sprintf("%.2f GiB", float64(b)/float64(GiB)) }

// FormatMiB writes b in whole MiB ("300 MiB", "1537 MiB"), for columns of
// process memory.
func FormatMiB(b int64) string { return fmt.Sprintf("%.0f MiB", float64(b)/float64(MiB)) }

// Bytes is a byte count that flags and configuration decoders read (it
// implements flag.Value and encoding.TextUnmarshaler) and print with
// FormatBytes. A setting's number must carry its unit: 64 could mean 64
// bytes or 64 GiB, so Set refuses a bare number other than 0 and asks for
// 64B or 64GiB; otherwise it reads what ParseBytes reads.
type Bytes int64

// ErrNoUnit is wrapped by Bytes.Set's refusal of a bare number.
var ErrNoUnit = errors.New("a byte size needs a unit")

// String returns FormatBytes of b (flag's help prints it as the default;
// Set reads it back, to the precision it shows).
func (b Bytes) String() string { return FormatBytes(int64(b)) }

// Set parses s with ParseBytes, refusing a number without a unit unless it
// is 0 (flag.Value).
func (b *Bytes) Set(s string) error {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil && f != 0 && f < math.MaxInt64 && strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }) < 0 {
		return fmt.Errorf("%w %q: %w: write %sB for bytes, or %sGiB, %sMiB", ErrSize, s, ErrNoUnit, t, t, t)
	}
	v, err := ParseBytes(s)
	if err != nil {
		return err
	}
	*b = Bytes(v)
	return nil
}

// UnmarshalText parses text as Set does.
func (b *Bytes) UnmarshalText(text []byte) error { return b.Set(string(text)) }

// MarshalText writes b as a number of bytes with the unit B ("0" for
// zero), which Set reads back exactly.
func (b Bytes) MarshalText() ([]byte, error) {
	out := strconv.AppendInt(nil, int64(b), 10)
	if b != 0 {
		out = append(out, 'B')
	}
	return out, nil
}
