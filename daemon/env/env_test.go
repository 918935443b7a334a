package env

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/cuzk-dev/cuzk/internal/environ"
)

func TestVar(t *testing.T) {
	assert.Equal(t, "CUZK_DAEMON_LISTEN", Var("listen"))
	assert.Equal(t, "CUZK_DAEMON_HTTP_LISTEN", Var("http_listen"))
	assert.Equal(t, "CUZK_DAEMON_KEY_DIR", Var("key_dir"))
}

// The prefix is registered to this package, so that a loader that refuses
// unknown names knows the family.
func TestPrefixRegistered(t *testing.T) {
	v, ok := environ.Lookup(Var("listen"))
	assert.True(t, ok)
	assert.Equal(t, environ.Var{Name: Prefix, Usage: v.Usage, Package: "github.com/cuzk-dev/cuzk/daemon/env", Prefix: true}, v)
}
