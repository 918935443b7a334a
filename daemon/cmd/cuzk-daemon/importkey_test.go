package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/prover/groth16"
	"github.com/cuzk-dev/cuzk/prover/groth16/keyfile"
	"github.com/cuzk-dev/cuzk/prover/r1cs"
	"github.com/cuzk-dev/cuzk/prover/r1cs/r1cstest"
)

func TestImportKey(t *testing.T) {
	sys, err := r1cs.Compile(r1cstest.NewCubic(3))
	require.NoError(t, err)
	pk, _, err := groth16.Setup(sys, bytes.NewReader(bytes.Repeat([]byte{7}, 1<<16)))
	require.NoError(t, err)
	var enc bytes.Buffer
	_, err = pk.WriteTo(&enc)
	require.NoError(t, err)
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "k.pk"), filepath.Join(dir, "k.rawpk")
	require.NoError(t, os.WriteFile(src, enc.Bytes(), 0o644))

	var out, errb bytes.Buffer
	require.Equal(t, exitOK, run(context.Background(), []string{"import-key", src, dst}, &out, &errb), errb.String())
	assert.Contains(t, out.String(), dst)
	k, err := keyfile.Open(dst, keyfile.RequireChecked())
	require.NoError(t, err)
	defer k.Close()
	var back bytes.Buffer
	_, err = k.PK.WriteTo(&back)
	require.NoError(t, err)
	assert.Equal(t, enc.Bytes(), back.Bytes())

	errb.Reset()
	assert.Equal(t, exitUsage, run(context.Background(), []string{"import-key", src}, &out, &errb))
	require.NoError(t, os.WriteFile(src, enc.Bytes()[:100], 0o644))
	errb.Reset()
	assert.Equal(t, exitFail, run(context.Background(), []string{"import-key", src, filepath.Join(dir, "bad.rawpk")}, &out, &errb))
	assert.Contains(t, errb.String(), src)
	assert.NoFileExists(t, filepath.Join(dir, "bad.rawpk"))
}
