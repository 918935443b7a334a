package driver

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests need no GPU and no driver: they cover the paths every machine
// takes, including the clean failure where libcuda is absent.

func TestLoadMissingLibraryIsNoDriver(t *testing.T) {
	err := load("libcuda-cuzk-absent.so.1")
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrNoDriver)
	assert.Contains(t, err.Error(), "dlopen")
}

func TestNoGPUPathIsCleanSentinel(t *testing.T) {
	n, err := Count()
	if err == nil {
		t.Skipf("a CUDA device is present (%d); the no-GPU path is not reachable here", n)
	}
	assert.Zero(t, n)
	assert.True(t, errors.Is(err, ErrNoGPU), "unexpected error %v", err)
	d, oerr := Open(0)
	assert.Nil(t, d)
	assert.True(t, errors.Is(oerr, ErrNoGPU), "unexpected error %v", oerr)
	t.Logf("no GPU here, as reported: %v", err)
}

func TestNoGPUSentinels(t *testing.T) {
	for _, err := range []error{ErrNoDriver, ErrNoDevice, fmt.Errorf("open: %w", ErrNoDevice),
		&Error{Code: NoDevice}, &Error{Code: StubLibrary}} {
		assert.ErrorIs(t, err, ErrNoGPU, "%v", err)
	}
	assert.NotErrorIs(t, ErrNoDriver, ErrNoDevice)
	assert.NotErrorIs(t, ErrNoDevice, ErrNoDriver)
	assert.NotErrorIs(t, ErrClosed, ErrNoGPU)
	assert.NotErrorIs(t, &Error{Code: Success}, ErrNoGPU)
	assert.Equal(t, "cuda driver: libcuda.so.1 not available", ErrNoDriver.Error())
}

func TestErrorMatchesSentinels(t *testing.T) {
	tests := []struct {
		code     Result
		noDevice bool
		noDriver bool
	}{
		{NoDevice, true, false},
		{InvalidDevice, true, false},
		{StubLibrary, false, true},
		{InsufficientDriver, false, true},
		{OutOfMemory, false, false},
		{InvalidContext, false, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(int(tt.code)), func(t *testing.T) {
			err := fmt.Errorf("open: %w", &Error{Step: "cuInit", Code: tt.code, Name: "N", Desc: "d"})
			assert.Equal(t, tt.noDevice, errors.Is(err, ErrNoDevice))
			assert.Equal(t, tt.noDriver, errors.Is(err, ErrNoDriver))
			assert.True(t, IsCode(err, tt.code))
			assert.False(t, IsCode(err, tt.code+1000))
		})
	}
	e := &Error{Step: "cuMemAlloc 64 bytes", Code: OutOfMemory, Name: "CUDA_ERROR_OUT_OF_MEMORY", Desc: "out of memory"}
	assert.Equal(t, "cuMemAlloc 64 bytes: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory", e.Error())
}

func TestPackArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []any
		offsets []int
		size    int
		wantErr string
	}{
		{name: "none", args: nil, offsets: []int{}, size: 0},
		{name: "ptr u32 f32 u64", args: []any{DevicePtr(0x1000), uint32(7), float32(1.5), uint64(9)},
			offsets: []int{0, 8, 16, 24}, size: 32},
		{name: "raw struct", args: []any{Raw{1, 2, 3}, int32(-1)}, offsets: []int{0, 8}, size: 12},
		{name: "plain int rejected", args: []any{DevicePtr(1), 3}, wantErr: "parameter 1: unsupported type int"},
		{name: "empty raw rejected", args: []any{Raw{}}, wantErr: "empty Raw"},
		{name: "too many", args: make([]any, maxArgs+1), wantErr: "at most 64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf, offs, err := packArgs(tt.args)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			got := make([]int, len(offs))
			for i, o := range offs {
				got[i] = int(o)
			}
			assert.Equal(t, tt.offsets, got)
			assert.Len(t, buf, tt.size)
		})
	}
}

func TestPackArgsLittleEndianValues(t *testing.T) {
	buf, offs, err := packArgs([]any{uint32(0x01020304), DevicePtr(0x1122334455667788)})
	require.NoError(t, err)
	require.Len(t, offs, 2)
	assert.Equal(t, []byte{4, 3, 2, 1}, buf[offs[0]:offs[0]+4])
	assert.Equal(t, []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, buf[offs[1]:offs[1]+8])
}

func TestBytesViewsPlainValues(t *testing.T) {
	v := []uint64{0x0807060504030201, 0x100f0e0d0c0b0a09}
	b := Bytes(v)
	require.Len(t, b, 16)
	for i := range b {
		assert.Equal(t, byte(i+1), b[i])
	}
	assert.Nil(t, Bytes([]uint32(nil)))
}

func TestDim3ZeroIsOne(t *testing.T) {
	assert.Equal(t, Dim3{4, 1, 1}, Dim3{X: 4}.norm())
	assert.Equal(t, Dim3{1, 1, 1}, Dim3{}.norm())
}
