package report_test

import (
	"os"
	"time"

	"github.com/cuzk-dev/cuzk/internal/report"
	"github.com/cuzk-dev/cuzk/internal/stats"
)

func Example() {
	t := report.NewTable("phase", "median")
	t.Add("quotient", stats.Median([]time.Duration{9, 7, 8}).String())
	_ = t.Write(os.Stdout)
	// Output:
	// phase     median
	// --------  ------
	// quotient     8ns
}
