package stats

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestQuantile(t *testing.T) {
	hundred := make([]time.Duration, 100) // 100 ms … 1 ms, reversed on purpose
	for i := range hundred {
		hundred[i] = time.Duration(100-i) * time.Millisecond
	}
	ms := time.Millisecond
	cases := []struct {
		name string
		s    []time.Duration
		q    float64
		want time.Duration
	}{
		{"none", nil, .5, 0},
		{"one", []time.Duration{7 * ms}, .99, 7 * ms},
		{"odd median", []time.Duration{5, 1, 3}, .5, 3},
		{"even median: mean of the middle pair", []time.Duration{4, 1, 3, 0}, .5, 2},
		{"even median rounds down", []time.Duration{40, 10, 30, 21}, .5, 25},
		{"p50 of 100", hundred, .5, 50*ms + ms/2},
		{"p90 of 100: whole rank, averaged", hundred, .9, 90*ms + ms/2},
		{"p99 of 100", hundred, .99, 99*ms + ms/2},
		{"p95 of 8: nearest rank", []time.Duration{1, 2, 3, 4, 5, 6, 7, 8}, .95, 8},
		{"p10 of 8: nearest rank", []time.Duration{1, 2, 3, 4, 5, 6, 7, 8}, .1, 1},
		{"p25 of 8: whole rank", []time.Duration{1, 2, 3, 4, 5, 6, 7, 8}, .25, 2},
		{"max", hundred, 1, 100 * ms},
		{"min", hundred, 0, ms},
		{"q clamped above", hundred, 1.5, 100 * ms},
		{"q clamped below", hundred, -1, ms},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Quantile(tc.s, tc.q))
			assert.Equal(t, []time.Duration{tc.want}, Quantiles(tc.s, tc.q))
		})
	}
	assert.Equal(t, 100*ms, hundred[0], "the samples keep their order")
}

func TestMedianIsQuantileHalf(t *testing.T) {
	for n := 1; n <= 9; n++ {
		s := make([]int64, n)
		for i := range s {
			s[i] = int64((i * 7) % n * 10)
		}
		assert.Equal(t, Quantile(s, .5), Median(s), "n=%d", n)
	}
	assert.Equal(t, 2.5, Median([]float64{4, 1, 3, 2}))
	assert.Zero(t, Median[float64](nil))
}

func TestQuantiles(t *testing.T) {
	got := Quantiles([]int{9, 1, 8, 2, 7, 3, 6, 4, 5, 10}, .5, .9, .99)
	assert.Equal(t, []int{5, 9, 10}, got) // p50 (5+6)/2 = 5 in integers; p90 (9+10)/2 = 9
	assert.Equal(t, []int{0, 0}, Quantiles[int](nil, .5, .9))
}

func ExampleQuantiles() {
	var lat []time.Duration
	for _, ms := range []time.Duration{12, 15, 11, 30, 14, 13, 16, 90} {
		lat = append(lat, ms*time.Millisecond)
	}
	for i, v := range Quantiles(lat, .5, .9, .99) {
		fmt.Printf("p%s %v\n", []string{"50", "90", "99"}[i], v)
	}
	// Output:
	// p50 14.5ms
	// p90 90ms
	// p99 90ms
}

func TestMean(t *testing.T) {
	ms := time.Millisecond
	assert.Equal(t, time.Duration(0), Mean[time.Duration](nil))
	assert.Equal(t, 7*ms, Mean([]time.Duration{7 * ms}))
	assert.Equal(t, 2*ms, Mean([]time.Duration{1 * ms, 2 * ms, 3 * ms}))
	assert.Equal(t, time.Duration(1), Mean([]time.Duration{1, 2}), "integers truncate")
	assert.Equal(t, -1, Mean([]int{-1, -2}), "toward zero")
	assert.InDelta(t, 1.5, Mean([]float64{1, 2}), 0)
	s := []time.Duration{3, 1, 2}
	Mean(s)
	assert.Equal(t, []time.Duration{3, 1, 2}, s, "not reordered")
}
