package progress

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestWriterPassesWholeLines(t *testing.T) {
	var out bytes.Buffer
	tk := Start(&out, "x", WithInterval(time.Hour))
	w := tk.Writer()
	for _, chunk := range []string{"one\ntw", "o\n", "thr", "ee\nfour"} {
		_, err := w.Write([]byte(chunk))
		assert.NoError(t, err)
	}
	tk.Stop()
	assert.Equal(t, "one\ntwo\nthree\n", out.String(), "a partial line waits for its end")
}

func TestLoggerPrintsLines(t *testing.T) {
	var out bytes.Buffer
	tk := Start(&out, "x", WithInterval(time.Hour))
	log := tk.Logger("release")
	log.Info("built", "package", "./daemon/cmd/cuzk", "bytes", 42)
	log.With("step", 2).WithGroup("g").Info("image", "digest", "sha256:ab")
	log.Debug("not shown")
	log.Log(nil, slog.LevelWarn, "careful")
	tk.Stop()
	assert.Equal(t, "release: built package=./daemon/cmd/cuzk bytes=42\nrelease: image step=2 g.digest=sha256:ab\nrelease: careful\n", out.String())
}
