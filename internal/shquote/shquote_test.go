package shquote

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestQuoteRoundTripsThroughSh(t *testing.T) {
	for _, s := range []string{"", "plain", "it's", `"$HOME" $(true) ; * \n`, "'''", "a\nb"} {
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
		require.NoError(t, err, s)
		assert.Equal(t, s, string(out))
	}
}
