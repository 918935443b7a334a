package cas

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// ActionID names a build step by the hash of all of its inputs.
type ActionID [32]byte

// OutputID names output bytes by their sha256.
type OutputID [32]byte

// String returns the lower-case hex form.
func (a ActionID) String() string { return hex.EncodeToString(a[:]) }

// String returns the lower-case hex form.
func (o OutputID) String() string { return hex.EncodeToString(o[:]) }

// Short returns the first 12 hex digits, for progress lines.
func (a ActionID) Short() string { return a.String()[:12] }

// ParseActionID parses the hex form written by String.
func ParseActionID(s string) (ActionID, error) {
	var a ActionID
	if err := parseHex(s, a[:]); err != nil {
		return ActionID{}, fmt.Errorf("parse action id: %w", err)
	}
	return a, nil
}

// ParseOutputID parses the hex form written by String.
func ParseOutputID(s string) (OutputID, error) {
	var o OutputID
	if err := parseHex(s, o[:]); err != nil {
		return OutputID{}, fmt.Errorf("parse output id: %w", err)
	}
	return o, nil
}

func parseHex(s string, dst []byte) error {
	if len(s) != 2*len(dst) {
		return fmt.Errorf("%q: want %d hex digits", s, 2*len(dst))
	}
	_, err := hex.Decode(dst, []byte(s))
	return err
}

// SumOutput returns the OutputID of b.
func SumOutput(b []byte) OutputID { return OutputID(sha256.Sum256(b)) }

// MarshalText implements encoding.TextMarshaler (hex).
func (a ActionID) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler (hex).
func (a *ActionID) UnmarshalText(b []byte) error {
	id, err := ParseActionID(string(b))
	*a = id
	return err
}

// MarshalText implements encoding.TextMarshaler (hex).
func (o OutputID) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler (hex).
func (o *OutputID) UnmarshalText(b []byte) error {
	id, err := ParseOutputID(string(b))
	*o = id
	return err
}
