package keyfile

import (
	"bufio"
	"fmt"
	"io"

	"github.com/cuzk-dev/cuzk/prover/groth16"
)

// Import decodes a proving key in the compressed encoding
// (groth16.ProvingKey.WriteTo's output) from r and writes it to path as a
// raw key file, checking every point unless SkipChecks is given: the
// import is where the subgroup checks are done, once. The reverse is
// Open(path) and then Key.PK.WriteTo, which writes the compressed encoding
// byte for byte as it was imported.
func Import(path string, r io.Reader, opts ...WriteOption) error {
	pk := new(groth16.ProvingKey)
	if _, err := pk.ReadFrom(bufio.NewReaderSize(r, 1<<20)); err != nil {
		return fmt.Errorf("import key file %s: %w", path, err)
	}
	return Write(path, pk, opts...)
}
