package devkeys

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
)

// RawExt is the extension of a raw key file (prover/groth16/keyfile)
// beside a cached key pair.
const RawExt = ".rawpk"

// Option configures Get.
type Option func(*config) error

type config struct{ raw, rawOnly bool }

// WithRawFile makes Get also write the proving key as a raw key file
// (Info.RawPath), replacing any there, whenever it returns keys from the
// cache directory: after a setup, and after loading a cached pair. Mapped
// then opens it without decoding. The points are not checked on the way
// (keyfile.SkipChecks): a development setup makes them in the subgroup by
// construction. Without the option Get writes no raw file, so the
// benchmarks' caches keep their size.
func WithRawFile() Option { return func(c *config) error { c.raw = true; return nil } }

// WithRawFileOnly is WithRawFile without the .pk: a setup leaves the raw
// key file and the .vk, so the key takes its raw size on disk once (a
// porep-c2 2^27 key: 46 GiB, not about 69 with its .pk beside it). Get
// reads a cached pair from the .pk, so it finds none of these later: a
// caller that uses this option looks the key up with Mapped first, as the
// daemon does. A .pk already there (written without the option) is still
// loaded, and the raw file written from it.
func WithRawFileOnly() Option {
	return func(c *config) error { c.raw, c.rawOnly = true, true; return nil }
}

// writeRaw writes pk's raw key file when the option asks for one.
func (c config) writeRaw(info *Info, pk *groth16.ProvingKey) error {
	if !c.raw || info.RawPath == "" {
		return nil
	}
	start := time.Now()
	if err := keyfile.Write(info.RawPath, pk, keyfile.SkipChecks()); err != nil {
		return fmt.Errorf("dev keys: %w", err)
	}
	info.Raw, info.RawSize = time.Since(start), fileSize(info.RawPath)
	return nil
}

// Mapped returns the development keys of sys from the raw key file and the
// verifying key in dir (named as by Get), mapping the proving key without
// decoding it (keyfile.Open with opts). The error matches os.ErrNotExist
// when either file is absent; any other error is a damaged or mismatched
// file, which a Get WithRawFile replaces. The caller closes the Key once no
// one uses it. Like Get, it is safe to call concurrently, from any number
// of processes.
func Mapped(dir, name string, sys *r1cs.System, seed uint64, opts ...keyfile.OpenOption) (*keyfile.Key, *groth16.VerifyingKey, Info, error) {
	var info Info
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, nil, info, fmt.Errorf("dev keys: bad circuit name %q", name)
	}
	_, info.VKPath, info.RawPath = paths(dir, name, seed, ShapeID(sys))
	start := time.Now()
	if _, err := os.Stat(info.RawPath); err != nil {
		return nil, nil, info, fmt.Errorf("dev keys: %w", err)
	}
	vk := new(groth16.VerifyingKey)
	if err := readFile(info.VKPath, vk); err != nil {
		return nil, nil, info, fmt.Errorf("dev keys: %w", err)
	}
	k, err := keyfile.Open(info.RawPath, opts...)
	if err != nil {
		return nil, nil, info, fmt.Errorf("dev keys: %w", err)
	}
	if err := fits(k.PK, vk, sys); err != nil {
		return nil, nil, info, errors.Join(fmt.Errorf("dev keys: %s: %w", info.RawPath, err), k.Close())
	}
	info.Cached, info.Load, info.RawSize, info.VKSize = true, time.Since(start), int64(k.Header.FileSize), fileSize(info.VKPath)
	return k, vk, info, nil
}
