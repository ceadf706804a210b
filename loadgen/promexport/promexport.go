// Package promexport serves a running load test's numbers in the Prometheus text format
// (github.com/prometheus/client_golang), so a dashboard can watch a long soak: requests and
// errors by operation and category, requests in flight, and the latency histogram.
package promexport

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

// latencyBounds are the histogram's buckets, in seconds.
var latencyBounds = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Collector reads a run's aggregator at each scrape. Set Agg (and InFlight) before serving; Agg
// may be nil until the run starts.
type Collector struct {
	// Agg is the run's aggregator.
	Agg func() *metrics.Aggregator
	// InFlight returns the requests in flight now (nil: not exported).
	InFlight func() int64

	requests, errors, inFlight, latency *prometheus.Desc
}

// NewCollector returns a collector reading agg.
func NewCollector(agg func() *metrics.Aggregator, inFlight func() int64) *Collector {
	return &Collector{
		Agg: agg, InFlight: inFlight,
		requests: prometheus.NewDesc("mcpspec_load_requests_total", "Requests finished, by operation.", []string{"op", "kind"}, nil),
		errors:   prometheus.NewDesc("mcpspec_load_errors_total", "Failed requests, by fault category (ToolError: isError results).", []string{"category"}, nil),
		inFlight: prometheus.NewDesc("mcpspec_load_in_flight", "Requests in flight.", nil, nil),
		latency:  prometheus.NewDesc("mcpspec_load_latency_seconds", "Latency from the intended send time.", nil, nil),
	}
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.requests
	ch <- c.errors
	ch <- c.inFlight
	ch <- c.latency
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	if c.InFlight != nil {
		ch <- prometheus.MustNewConstMetric(c.inFlight, prometheus.GaugeValue, float64(c.InFlight()))
	}
	agg := c.Agg()
	if agg == nil {
		return
	}
	bounds := make([]int64, len(latencyBounds))
	for i, b := range latencyBounds {
		bounds[i] = int64(b * 1e6)
	}
	var counters metrics.Counters
	var counts []uint64
	var sum float64
	var total uint64
	agg.Do(func(st *metrics.State) {
		counters = st.Counters()
		counts, sum = st.CumulativeCounts(bounds)
		total = uint64(st.Latency().TotalCount())
	})
	for _, op := range counters.PerOp {
		ch <- prometheus.MustNewConstMetric(c.requests, prometheus.CounterValue, float64(op.Requests), op.Name, string(op.Kind))
	}
	for cat, n := range counters.ByCategory {
		ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(n), string(cat))
	}
	buckets := make(map[float64]uint64, len(latencyBounds))
	for i, b := range latencyBounds {
		buckets[b] = counts[i]
	}
	ch <- prometheus.MustNewConstHistogram(c.latency, total, sum/1e6, buckets)
}

// Handler returns an http.Handler serving c (and nothing else) at any path.
func Handler(c *Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
