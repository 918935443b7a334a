//go:build !linux

package keyfile

import (
	"errors"
	"os"
)

// takeLease: file leases (F_SETLEASE) are Linux's.
func takeLease(*os.File) error { return errors.New("no file lease: file leases are Linux-only") }

func leaseBreaking(*os.File) bool { return false }
func watch(*Key)                  {}
func unwatch(*Key)                {}
