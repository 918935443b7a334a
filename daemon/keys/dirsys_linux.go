//go:build linux

package keys

import (
	"os"
	"syscall"
	"time"
)

// accessTime is st's last access time (its modification time where the
// system does not say).
func accessTime(st os.FileInfo) time.Time {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return time.Unix(int64(s.Atim.Sec), int64(s.Atim.Nsec))
	}
	return st.ModTime()
}

// lockDir takes a shared lock (flock) on dir itself for the manager's
// life, writing nothing there, and reports whether this manager is alone
// on dir (no other manager, in this process or another, held it when it
// looked): then every temporary file there is stale.
func lockDir(dir string) (release func(), alone bool, err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false, err
	}
	alone = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH); err != nil { // downgrade, or join the others
		f.Close()
		return nil, false, err
	}
	return func() { f.Close() }, alone, nil
}
