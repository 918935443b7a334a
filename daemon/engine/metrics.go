package engine

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the engine's Prometheus collectors.
type metrics struct {
	jobs   *prometheus.CounterVec   // cuzk_jobs_total{outcome}
	phases *prometheus.HistogramVec // cuzk_job_phase_seconds{phase}
	subs   *prometheus.CounterVec   // cuzk_jobs_submitted_total{priority}
	// batched counts the jobs a device proved in batches of two or more
	// (BatchProver): cuzk_batched_jobs_total.
	batched prometheus.Counter
}

func newMetrics(e *Engine, reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuzk_jobs_total",
			Help: "Jobs ended, by outcome (done, failed, cancelled)."}, []string{"outcome"}),
		subs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cuzk_jobs_submitted_total",
			Help: "Jobs accepted, by priority."}, []string{"priority"}),
		phases: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "cuzk_job_phase_seconds",
			Help:    "Duration of each phase of the jobs that proved (queue, key_load, synthesis, handoff, prove, verify, total, and the prover's phases).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 20)}, []string{"phase"}),
		batched: prometheus.NewCounter(prometheus.CounterOpts{Name: "cuzk_batched_jobs_total",
			Help: "Jobs a device proved in a batch of two or more of the same key, sharing the upload of streamed bases."}),
	}
	if reg == nil {
		return m, nil
	}
	queue := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cuzk_queue_depth", Help: "Jobs waiting for synthesis."},
		func() float64 {
			n := 0
			for _, d := range e.queue.depths() {
				n += d
			}
			return float64(n)
		})
	ready := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cuzk_handoff_depth", Help: "Synthesized jobs waiting for a device."},
		func() float64 { return float64(e.readyJobs()) })
	host := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cuzk_host_bytes_in_flight", Help: "Host memory held by synthesized jobs and by their vectors kept for reuse."},
		func() float64 { return float64(e.budget.inUse()) })
	kept := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cuzk_host_bytes_kept",
		Help: "Part of cuzk_host_bytes_in_flight held by solved vectors kept for the next job of their key."},
		func() float64 { return float64(e.budget.keptBytes()) })
	busy := &busyCollector{e: e, desc: prometheus.NewDesc("cuzk_device_busy_ratio",
		"Share of the daemon's uptime each device spent proving.", []string{"device"}, nil)}
	keys := &keyCollector{e: e, desc: prometheus.NewDesc("cuzk_keys",
		"Keys held, by residency tier (warm: host memory, hot: on a GPU).", []string{"tier"}, nil)}
	for _, c := range []prometheus.Collector{m.jobs, m.subs, m.phases, m.batched, queue, ready, host, kept, busy, keys} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("engine: register metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) submitted(p Priority) { m.subs.WithLabelValues(p.String()).Inc() }

func (m *metrics) ended(j *Job, r *Result, err error, cancelled bool) {
	switch {
	case cancelled:
		m.jobs.WithLabelValues("cancelled").Inc()
	case err != nil:
		m.jobs.WithLabelValues("failed").Inc()
	default:
		m.jobs.WithLabelValues("done").Inc()
		t := r.Timings
		for name, d := range map[string]float64{"queue": t.Queue.Seconds(), "key_load": t.KeyLoad.Seconds(),
			"synthesis": t.Synthesis.Seconds(), "handoff": t.Handoff.Seconds(), "prove": t.Prove.Seconds(),
			"verify": t.Verify.Seconds(), "total": t.Total.Seconds()} {
			m.phases.WithLabelValues(name).Observe(d)
		}
		for p, d := range t.Phases {
			m.phases.WithLabelValues("prover " + p).Observe(d.Seconds())
		}
	}
}

type busyCollector struct {
	e    *Engine
	desc *prometheus.Desc
}

func (c *busyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c *busyCollector) Collect(ch chan<- prometheus.Metric) {
	for _, d := range c.e.Status().Devices {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, d.BusyRatio, d.Name)
	}
}

type keyCollector struct {
	e    *Engine
	desc *prometheus.Desc
}

func (c *keyCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }
func (c *keyCollector) Collect(ch chan<- prometheus.Metric) {
	counts := map[string]float64{"warm": 0, "hot": 0}
	for _, k := range c.e.cfg.Keys.List() {
		counts[k.Tier.String()]++
	}
	for tier, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, n, tier)
	}
}
