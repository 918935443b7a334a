// Package devicetest holds fakes of daemon/device's interfaces, for the
// tests of that package and of the packages that use it (daemon/engine).
package devicetest

import (
	"errors"
	"sync"
	"unsafe"
)

// Pinner is a device.HostPinner that records what it was given, as a GPU
// would page-lock it. Tests read its fields once the calls they check have
// returned, or under Mu.
type Pinner struct {
	Label   string
	Mu      sync.Mutex
	Pinned  map[*byte]int  // first byte → bytes, while pinned
	Pins    int            // PinHost calls
	Adopted map[*byte]bool // first bytes adopted and not yet unpinned
	Log     *[]string      // shared by the pinners of a test: who unpinned, in order (nil: none)
}

// NewPinner returns a Pinner labelled label that appends its label to log
// (when not nil) at every UnpinHost.
func NewPinner(label string, log *[]string) *Pinner {
	return &Pinner{Label: label, Pinned: map[*byte]int{}, Adopted: map[*byte]bool{}, Log: log}
}

// AdoptHost records p as adopted.
func (d *Pinner) AdoptHost(p []byte) error {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	d.Adopted[unsafe.SliceData(p)] = true
	return nil
}

// PinHost records p as pinned.
func (d *Pinner) PinHost(p []byte) error {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	d.Pinned[unsafe.SliceData(p)] = len(p)
	d.Pins++
	return nil
}

// UnpinHost forgets p, pinned or adopted, and logs the label.
func (d *Pinner) UnpinHost(p []byte) error {
	d.Mu.Lock()
	defer d.Mu.Unlock()
	delete(d.Pinned, unsafe.SliceData(p))
	delete(d.Adopted, unsafe.SliceData(p))
	if d.Log != nil {
		*d.Log = append(*d.Log, d.Label)
	}
	return nil
}

// ErrPin is Refusing's PinHost error.
var ErrPin = errors.New("mlock limit")

// Refusing is a Pinner that refuses every PinHost, as a low locked-memory
// limit would.
type Refusing struct{ *Pinner }

// PinHost refuses p.
func (Refusing) PinHost([]byte) error { return ErrPin }
