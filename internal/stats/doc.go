// Package stats holds the numbers every cuzk report shares: medians,
// quantiles and means of samples, byte sizes (formatted and parsed, with
// units such as 64GiB), counts written as powers of two, and durations in
// milliseconds or seconds.
//
// One definition of a quantile serves everywhere, so that a report's median
// and its p50 are the same number: Quantile is the inverse of the samples'
// empirical distribution function, averaged where it jumps (definition 2 of
// Hyndman and Fan, "Sample quantiles in statistical packages", 1996). For n
// sorted samples x1 ≤ … ≤ xn and 0 ≤ q ≤ 1, let k = q·n: when k is a whole
// number the q-quantile is (xk + xk+1)/2, otherwise it is x⌈k⌉ (the nearest
// rank), with x0 = x1 and xn+1 = xn. Median is Quantile(s, 0.5): the middle
// sample, or the mean of the two middle ones for an even count.
//
// Every function is pure, leaves its arguments as they were and is safe for
// concurrent use. Standard library only.
package stats
