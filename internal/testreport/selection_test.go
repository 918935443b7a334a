package testreport_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/cuzk-dev/cuzk/internal/testreport"
)

func TestSelection(t *testing.T) {
	for _, tc := range []struct {
		name string
		sel  testreport.Selection
		want []string
		str  string
	}{
		{"default", testreport.Selection{}, []string{"test", "-json", "-count=1", "-timeout", "45m0s", "./..."}, "./..."},
		{"blank packages", testreport.Selection{Packages: " \t"},
			[]string{"test", "-json", "-count=1", "-timeout", "45m0s", "./..."}, "./..."},
		{"subset", testreport.Selection{Packages: " ./toolchain/...  ./ci/oci ", Run: "Remote|Image/digest"},
			[]string{"test", "-json", "-count=1", "-timeout", "45m0s", "-run", "Remote|Image/digest", "./toolchain/...", "./ci/oci"},
			"./toolchain/... ./ci/oci -run Remote|Image/digest"},
		{"race", testreport.Selection{Packages: "./daemon/...", Race: true},
			[]string{"test", "-json", "-count=1", "-timeout", "45m0s", "-race", "./daemon/..."}, "-race ./daemon/..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, err := tc.sel.GoTestArgs(45 * time.Minute)
			require.NoError(t, err)
			assert.Equal(t, tc.want, args)
			assert.Equal(t, tc.str, tc.sel.String())
		})
	}
	_, err := testreport.Selection{Run: "Test(["}.GoTestArgs(time.Minute)
	assert.ErrorContains(t, err, `-run "Test(["`)
}
