package cuda

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/cuzk-dev/cuzk/cuda/manifest"
	"io/fs"
	"sync"
)

// ErrNoKernels reports that this binary was built before any kernel was
// materialized; run `go run mage.go kernels` (or `build`) and rebuild.
var ErrNoKernels = errors.New("cuda: no kernels embedded in this binary (run `go run mage.go build`)")

// ErrUnknownKernel reports a kernel name the manifest does not list.
var ErrUnknownKernel = errors.New("cuda: unknown kernel")

//go:embed fatbin
var embedded embed.FS

var loadOnce = sync.OnceValues(func() (manifest.Manifest, error) { return load(embedded) })

// Embedded returns the manifest embedded in this binary, after checking that
// every fatbin it lists is embedded with the recorded sha256. It is safe for
// concurrent use; the check runs once per process.
func Embedded() (manifest.Manifest, error) { return loadOnce() }

// Fatbin returns the embedded fatbin of kernel name, verified against the
// manifest. It is safe for concurrent use.
func Fatbin(name string) ([]byte, error) {
	m, err := Embedded()
	if err != nil {
		return nil, err
	}
	if _, ok := m.Lookup(name); !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKernel, name)
	}
	return fs.ReadFile(embedded, "fatbin/"+name+".fatbin")
}

func load(fsys fs.FS) (manifest.Manifest, error) {
	b, err := fs.ReadFile(fsys, "fatbin/"+manifest.File)
	if errors.Is(err, fs.ErrNotExist) {
		return manifest.Manifest{}, ErrNoKernels
	}
	if err != nil {
		return manifest.Manifest{}, fmt.Errorf("read embedded manifest: %w", err)
	}
	m, err := manifest.Decode(b)
	if err != nil {
		return manifest.Manifest{}, err
	}
	for _, k := range m.Kernels {
		fb, err := fs.ReadFile(fsys, "fatbin/"+k.Name+".fatbin")
		if err != nil {
			return manifest.Manifest{}, fmt.Errorf("embedded kernel %s: %w", k.Name, err)
		}
		sum := sha256.Sum256(fb)
		if got := hex.EncodeToString(sum[:]); got != k.FatbinSHA256 {
			return manifest.Manifest{}, fmt.Errorf("embedded kernel %s: fatbin sha256 %s, manifest says %s", k.Name, got, k.FatbinSHA256)
		}
	}
	return m, nil
}
