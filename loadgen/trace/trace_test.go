package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/session"
)

func TestLinesAreJSON(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	echo := metrics.Op{Name: "echo", Kind: metrics.KindTool}
	w.Call(&metrics.Sample{ID: 7, Worker: 2, Intended: time.Second, Sent: time.Second + 500*time.Microsecond, Done: time.Second + 2500*time.Microsecond}, echo)
	w.Call(&metrics.Sample{ID: 8, Intended: 2 * time.Second, Sent: 2 * time.Second, Done: 3 * time.Second,
		Category: session.ServerError, Code: -32603, Msg: "bad \"thing\"\n\x01\xff"}, echo)
	w.Call(&metrics.Sample{Done: time.Second, Category: session.Hang, Msg: "late"}, metrics.Op{Name: "login", Kind: metrics.KindTest})
	w.Call(&metrics.Sample{Done: time.Second, Failed: true, Msg: "$.x: want 1"}, metrics.Op{Name: "login", Kind: metrics.KindTest})
	w.Process(1500*time.Millisecond, metrics.ResourceSample{RSSMB: 45.25, CPUPct: 12.5, FDs: 9, Threads: 4})
	w.Scenario(0, "stage", "stage 1: 400/s")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.Count() != 6 {
		t.Errorf("count %d", w.Count())
	}
	var got []map[string]any
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		got = append(got, m)
	}
	want := []map[string]any{
		{"ts": 1.0025, "kind": "response", "request_id": 7.0, "method": "tools/call", "tool": "echo", "worker": 2.0,
			"intended_ts": 1.0, "sent_ts": 1.0005, "duration_ms": 2.5, "service_ms": 2.0},
		{"ts": 3.0, "kind": "error", "request_id": 8.0, "method": "tools/call", "tool": "echo", "worker": 0.0,
			"intended_ts": 2.0, "sent_ts": 2.0, "duration_ms": 1000.0, "service_ms": 1000.0,
			"error": map[string]any{"category": "ServerError", "message": "bad \"thing\"\n\x01\ufffd", "code": -32603.0}},
		{"ts": 1.0, "kind": "hang", "test": "login", "worker": 0.0, "intended_ts": 0.0, "sent_ts": 0.0, "duration_ms": 1000.0,
			"service_ms": 1000.0, "error": map[string]any{"category": "Hang", "message": "late"}},
		{"ts": 1.0, "kind": "response", "test": "login", "worker": 0.0, "intended_ts": 0.0, "sent_ts": 0.0, "duration_ms": 1000.0,
			"service_ms": 1000.0, "assertion": "$.x: want 1"},
		{"ts": 1.5, "kind": "process_sample", "rss_mb": 45.25, "cpu_pct": 12.5, "fds": 9.0, "threads": 4.0},
		{"ts": 0.0, "kind": "scenario_event", "event": "stage", "message": "stage 1: 400/s"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events differ (-want +got):\n%s", diff)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestFlushReportsWriteError(t *testing.T) {
	w := NewWriter(failWriter{})
	w.Scenario(0, "x", "y")
	if err := w.Flush(); err == nil {
		t.Error("no error from a failing writer")
	}
}

// BenchmarkTraceWriter is the trace's cost per event written to a file on tmpfs when there is
// one (/dev/shm), as the load engine writes it: events/s of wall clock, and cpu-ns/event, the
// process's CPU time per event, which a loaded machine inflates far less (target: over
// 1,000,000 events per second).
func BenchmarkTraceWriter(b *testing.B) {
	dir := "/dev/shm"
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		dir = ""
	}
	f, err := os.CreateTemp(dir, "trace-bench-*.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	w := NewWriter(f)
	op := metrics.Op{Name: "echo", Kind: metrics.KindTool}
	s := metrics.Sample{ID: 1, Worker: 3}
	cpu0 := cpuTime(b)
	for b.Loop() {
		s.ID++
		s.Intended += 2500 * time.Microsecond
		s.Sent = s.Intended + 3*time.Microsecond
		s.Done = s.Sent + 180*time.Microsecond
		w.Call(&s, op)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/event")
}

// BenchmarkWriterEncode is the encoding alone (no file).
func BenchmarkWriterEncode(b *testing.B) {
	w := NewWriter(io.Discard)
	op := metrics.Op{Name: "echo", Kind: metrics.KindTool}
	s := metrics.Sample{ID: 1, Worker: 3}
	for b.Loop() {
		s.ID++
		s.Intended += 2500 * time.Microsecond
		s.Sent = s.Intended + 3*time.Microsecond
		s.Done = s.Sent + 180*time.Microsecond
		w.Call(&s, op)
	}
}
