package promexport

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session"
)

func TestScrape(t *testing.T) {
	agg := metrics.NewAggregator([]metrics.Op{{Name: "echo", Kind: metrics.KindTool}})
	var batch []metrics.Sample
	for i := range 100 {
		s := metrics.Sample{Op: 0, Done: time.Duration(i) * time.Millisecond}
		s.Intended = s.Done - time.Duration(i+1)*time.Millisecond/10
		if i%10 == 0 {
			s.Category = session.Timeout
		}
		batch = append(batch, s)
	}
	agg.Add(batch)
	srv := httptest.NewServer(Handler(NewCollector(func() *metrics.Aggregator { return agg }, func() int64 { return 7 })))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("not the Prometheus text format: %v\n%s", err, body)
	}
	if v := fams["mcpspec_load_requests_total"].GetMetric()[0].GetCounter().GetValue(); v != 100 {
		t.Errorf("requests %v", v)
	}
	if v := fams["mcpspec_load_errors_total"].GetMetric()[0].GetCounter().GetValue(); v != 10 {
		t.Errorf("errors %v", v)
	}
	if v := fams["mcpspec_load_in_flight"].GetMetric()[0].GetGauge().GetValue(); v != 7 {
		t.Errorf("in flight %v", v)
	}
	h := fams["mcpspec_load_latency_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 100 {
		t.Errorf("histogram count %d", h.GetSampleCount())
	}
	// Latencies 0.1..10ms: all within the 10ms bucket, none within 0.05ms.
	for _, b := range h.GetBucket() {
		if b.GetUpperBound() == 0.01 && b.GetCumulativeCount() != 100 {
			t.Errorf("10ms bucket %d", b.GetCumulativeCount())
		}
	}
}
