package resources

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// The process collector's metrics that [Metrics] reads.
const (
	metricRSS   = "process_resident_memory_bytes"
	metricCPU   = "process_cpu_seconds_total"
	metricFDs   = "process_open_fds"
	metricStart = "process_start_time_seconds"
)

// maxMetricsBody bounds the /metrics answer read per sample.
const maxMetricsBody = 16 << 20

// acceptText asks for the Prometheus text format (version 0.0.4), which every exporter
// speaks; protobuf is decoded too if a server sends it anyway.
const acceptText = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// Metrics samples a Prometheus /metrics endpoint. Create it with [Prometheus].
type Metrics struct {
	url    string
	client *http.Client

	mu  sync.Mutex // guards cpu
	cpu cpuClock
}

var _ Sampler = (*Metrics)(nil)

// Prometheus returns a sampler of the /metrics endpoint at rawURL, fetched with client (nil
// means a client of its own without a timeout: [Watch] bounds each sample). Each sample sums
// every series of process_resident_memory_bytes, process_cpu_seconds_total and
// process_open_fds (an exporter of several processes labels one series each); Procs is the
// number of RSS series. Metrics absent from the answer are left out of [Sample.Have]; an
// answer with none of them is an error.
func Prometheus(rawURL string, client *http.Client) (*Metrics, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("resources: metrics URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("resources: metrics URL %q: want http(s)://host/path", rawURL)
	}
	if client == nil {
		client = &http.Client{}
	}
	return &Metrics{url: u.String(), client: client}, nil
}

// String names what is sampled.
func (m *Metrics) String() string { return "metrics at " + m.url }

// Sample fetches and parses the endpoint once.
func (m *Metrics) Sample(ctx context.Context) (Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url, nil)
	if err != nil {
		return Sample{}, fmt.Errorf("resources: %s: %w", m, err)
	}
	req.Header.Set("Accept", acceptText)
	resp, err := m.client.Do(req)
	if err != nil {
		return Sample{}, fmt.Errorf("resources: %s: %w", m, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return Sample{}, fmt.Errorf("resources: %s: status %s", m, resp.Status)
	}
	at := time.Now()
	fams, err := decodeFamilies(io.LimitReader(resp.Body, maxMetricsBody), expfmt.ResponseFormat(resp.Header))
	if err != nil {
		return Sample{}, fmt.Errorf("resources: %s: %w", m, err)
	}
	s := Sample{At: at}
	if v, n, ok := sum(fams[metricRSS]); ok {
		s.RSSBytes, s.Procs, s.Have = uint64(min(v, 1<<63)), n, s.Have|HaveRSS|HaveProcs
	}
	if v, _, ok := sum(fams[metricFDs]); ok {
		s.FDs, s.Have = int(min(v, math.MaxInt32)), s.Have|HaveFDs
	}
	cpu, _, hasCPU := sum(fams[metricCPU])
	if s.Have == 0 && !hasCPU {
		return Sample{}, fmt.Errorf("resources: %s: none of %s, %s, %s exposed", m, metricRSS, metricCPU, metricFDs)
	}
	if hasCPU {
		var start time.Time
		if v, n, ok := sum(fams[metricStart]); ok && n == 1 && v > 0 {
			start = time.Unix(0, int64(v*1e9))
		}
		s.CPUSeconds = cpu
		m.mu.Lock()
		pct, ok := m.cpu.percent(at, cpu, start)
		m.mu.Unlock()
		if ok {
			s.CPUPercent, s.Have = pct, s.Have|HaveCPU
		}
	}
	return s, nil
}

// decodeFamilies reads the metric families of interest from an exposition.
func decodeFamilies(r io.Reader, format expfmt.Format) (map[string]*dto.MetricFamily, error) {
	dec := expfmt.NewDecoder(r, format)
	out := make(map[string]*dto.MetricFamily)
	for {
		var f dto.MetricFamily
		err := dec.Decode(&f)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("parse metrics: %w", err)
		}
		switch f.GetName() {
		case metricRSS, metricCPU, metricFDs, metricStart:
			out[f.GetName()] = &f
		}
	}
}

// sum adds the values of every series of a gauge, counter or untyped family; a series whose
// value is negative, NaN or infinite is left out.
func sum(f *dto.MetricFamily) (total float64, series int, ok bool) {
	if f == nil {
		return 0, 0, false
	}
	for _, m := range f.GetMetric() {
		var v float64
		switch {
		case m.GetGauge() != nil:
			v = m.GetGauge().GetValue()
		case m.GetCounter() != nil:
			v = m.GetCounter().GetValue()
		case m.GetUntyped() != nil:
			v = m.GetUntyped().GetValue()
		default:
			continue
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		total += v
		series++
	}
	return total, series, series > 0
}
