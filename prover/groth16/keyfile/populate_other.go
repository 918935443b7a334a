//go:build unix && !linux

package keyfile

// populateFlag is 0 off Linux: Populate maps lazily there.
const populateFlag = 0
