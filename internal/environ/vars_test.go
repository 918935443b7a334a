package environ

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Registered here for the test: the owner is this package.
var (
	_ = Register("ENVIRONTEST_ONE", "a variable of the test")
	_ = RegisterPrefix("ENVIRONTEST_FAMILY_", "a family of the test")
	_ = RegisterPrefix("ENVIRONTEST_FAMILY_DEEP_", "a narrower family")
)

func TestRegister(t *testing.T) {
	v, ok := Lookup("ENVIRONTEST_ONE")
	assert.True(t, ok)
	assert.Equal(t, Var{Name: "ENVIRONTEST_ONE", Usage: "a variable of the test", Package: "github.com/cuzk-dev/cuzk/internal/environ"}, v)

	v, ok = Lookup("ENVIRONTEST_FAMILY_KEY")
	assert.True(t, ok)
	assert.Equal(t, "ENVIRONTEST_FAMILY_", v.Name)
	assert.True(t, v.Prefix)
	v, _ = Lookup("ENVIRONTEST_FAMILY_DEEP_KEY")
	assert.Equal(t, "ENVIRONTEST_FAMILY_DEEP_", v.Name, "the longest prefix")

	for _, name := range []string{"ENVIRONTEST_TWO", "ENVIRONTEST_FAMILY_", "ENVIRONTEST_ONEX", "ENVIRONTEST"} {
		_, ok := Lookup(name)
		assert.False(t, ok, name)
	}

	assert.PanicsWithValue(t, "environ: ENVIRONTEST_ONE registered by github.com/cuzk-dev/cuzk/internal/environ and again by github.com/cuzk-dev/cuzk/internal/environ",
		func() { Register("ENVIRONTEST_ONE", "again") })
	assert.Panics(t, func() { Register("lower", "x") })
	assert.Panics(t, func() { Register("ENVIRONTEST_THREE", "") })
	assert.Panics(t, func() { Register("ENVIRONTEST_THREE_", "a prefix through Register") })
	assert.Panics(t, func() { RegisterPrefix("ENVIRONTEST_THREE", "a name through RegisterPrefix") })

	names := []string{}
	for _, v := range Registered() {
		names = append(names, v.Name)
	}
	assert.Subset(t, names, []string{"ENVIRONTEST_FAMILY_", "ENVIRONTEST_FAMILY_DEEP_", "ENVIRONTEST_ONE"})
}
