package environ

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMap(t *testing.T) {
	got := Map([]string{"A=1", "B=", "C=x=y", "junk", "A=2"})
	assert.Equal(t, map[string]string{"A": "2", "B": "", "C": "x=y"}, got)
	assert.Empty(t, Map(nil))
}
