package resources_test

import (
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/mcpspec/mcpspec/loadgen/resources"
)

func promSampler(t *testing.T, url string) *resources.Metrics {
	t.Helper()
	m, err := resources.Prometheus(url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestPrometheusProcessCollector scrapes this process's own metrics, served by the real
// client_golang process collector, and checks them against a direct reading of the process.
func TestPrometheusProcessCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	m := promSampler(t, srv.URL+"/metrics")

	// A test binary run alone may not have used one clock tick of CPU yet, and the kernel
	// counts CPU in ticks: spin until this process has used a few, so that both readings
	// are above zero for a reason.
	spinCPU(t, 0.05)
	first := sample(t, m)
	direct := sample(t, tree(t, os.Getpid()))
	want := resources.HaveRSS | resources.HaveCPU | resources.HaveFDs | resources.HaveProcs
	if first.Have != want {
		t.Errorf("Have = %v, want %v", first.Have, want)
	}
	if first.Procs != 1 {
		t.Errorf("Procs = %d, want 1", first.Procs)
	}
	// The same process read two ways, a moment apart (a collection may run between): within
	// a third (or 16 MiB).
	if d := math.Abs(float64(first.RSSBytes) - float64(direct.RSSBytes)); d > max(float64(direct.RSSBytes)/3, 16*mib) {
		t.Errorf("RSS from /metrics %d, from the process %d", first.RSSBytes, direct.RSSBytes)
	}
	if first.FDs < 3 || first.FDs > direct.FDs+16 {
		t.Errorf("FDs from /metrics %d, from the process %d", first.FDs, direct.FDs)
	}
	if first.CPUSeconds <= 0 || first.CPUSeconds > direct.CPUSeconds+1 {
		t.Errorf("CPU seconds from /metrics %v, from the process %v", first.CPUSeconds, direct.CPUSeconds)
	}
	second := sample(t, m)
	wall := second.At.Sub(first.At).Seconds()
	if want := (second.CPUSeconds - first.CPUSeconds) / wall * 100; math.Abs(second.CPUPercent-want) > 1e-6*max(want, 1) {
		t.Errorf("CPUPercent = %v, want %v", second.CPUPercent, want)
	}
}

// TestPrometheusProtobuf decodes an endpoint that answers in the delimited protobuf format
// whatever it is asked for.
func TestPrometheusProtobuf(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fams, err := reg.Gather()
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		f := expfmt.NewFormat(expfmt.TypeProtoDelim)
		w.Header().Set("Content-Type", string(f))
		enc := expfmt.NewEncoder(w, f)
		for _, mf := range fams {
			if err := enc.Encode(mf); err != nil {
				t.Error(err)
			}
		}
	}))
	defer srv.Close()
	s := sample(t, promSampler(t, srv.URL))
	if !s.Have.Has(resources.HaveRSS|resources.HaveFDs) || s.RSSBytes < mib {
		t.Errorf("protobuf answer: %+v", s)
	}
}

func serveText(t *testing.T, status int, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

func TestPrometheusText(t *testing.T) {
	// An exporter of two worker processes, and a start time in the past (the first CPU
	// figure is the average since then).
	start := float64(time.Now().Add(-100*time.Second).UnixNano()) / 1e9
	body := `# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes{worker="0"} 1.048576e+07
process_resident_memory_bytes{worker="1"} 2.097152e+07
# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total{worker="0"} 20
process_cpu_seconds_total{worker="1"} 30
# TYPE process_open_fds gauge
process_open_fds{worker="0"} 12
process_open_fds{worker="1"} 30
# TYPE process_start_time_seconds gauge
process_start_time_seconds ` + strconv.FormatFloat(start, 'f', 3, 64) + `
# TYPE nodejs_heap_size_used_bytes gauge
nodejs_heap_size_used_bytes 5.5e+06
`
	s := sample(t, promSampler(t, serveText(t, 200, body)))
	if s.RSSBytes != 30*mib || s.Procs != 2 || s.FDs != 42 || s.CPUSeconds != 50 {
		t.Errorf("two workers: %+v", s)
	}
	if !s.Have.Has(resources.HaveCPU) || s.CPUPercent < 45 || s.CPUPercent > 55 {
		t.Errorf("first CPU figure %v, want about 50 (50 s over 100 s)", s.CPUPercent)
	}

	// Without a start time the first sample has no CPU figure; without fds, no FDs.
	s = sample(t, promSampler(t, serveText(t, 200, "process_resident_memory_bytes 4096\nprocess_cpu_seconds_total 1\n")))
	if s.Have != resources.HaveRSS|resources.HaveProcs || s.RSSBytes != 4096 {
		t.Errorf("untyped RSS only: %+v", s)
	}
}

func TestPrometheusFailures(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"not found", 404, "no", "404"},
		{"no process metrics", 200, "# TYPE go_goroutines gauge\ngo_goroutines 7\n", "none of"},
		{"garbage", 200, "process_resident_memory_bytes{ 12\n\x00\xff", "parse metrics"},
		{"not a number", 200, "process_resident_memory_bytes lots\n", "parse metrics"},
		{"empty", 200, "", "none of"},
		{"not finite", 200, "process_resident_memory_bytes NaN\nprocess_open_fds +Inf\nprocess_cpu_seconds_total -1\n", "none of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := promSampler(t, serveText(t, c.status, c.body)).Sample(t.Context())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
	for _, u := range []string{"", "127.0.0.1:9090/metrics", "ftp://x/metrics", "http://", "http://%zz"} {
		if _, err := resources.Prometheus(u, nil); err == nil {
			t.Errorf("Prometheus(%q) accepted", u)
		}
	}
	// A server that is not there.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	if _, err := promSampler(t, url).Sample(t.Context()); err == nil {
		t.Error("a closed port sampled")
	}
}

// spinCPU burns CPU until this process has used at least seconds of it (as /proc counts it),
// or fails the test after a bounded number of tries.
func spinCPU(t *testing.T, seconds float64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	x := 0
	for time.Now().Before(deadline) {
		if sample(t, tree(t, os.Getpid())).CPUSeconds >= seconds {
			return
		}
		for i := range 5_000_000 {
			x += i ^ x
		}
	}
	t.Fatalf("this process did not reach %v s of CPU within 30 s (%d)", seconds, x)
}
