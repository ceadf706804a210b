package rundir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/mcpspec/mcpspec/loadgen/analysis"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

func run(t *testing.T) *metrics.Run {
	t.Helper()
	st := metrics.NewState([]metrics.Op{{Name: "echo", Kind: metrics.KindTool}})
	for i := range 500 {
		d := time.Duration(i) * 4 * time.Millisecond
		st.Add(&metrics.Sample{Intended: d - time.Millisecond, Sent: d - time.Millisecond, Done: d})
	}
	r := &metrics.Run{RunID: "r1", StartedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), DurationSecs: 2,
		Scenario: metrics.Scenario{Kind: "sustained", Model: "open", Rate: 250, SessionMode: "shared"}, Passed: true}
	if err := metrics.Derive(r, st); err != nil {
		t.Fatal(err)
	}
	analysis.Analyze(r, analysis.Options{})
	return r
}

func TestWriteRead(t *testing.T) {
	parent := t.TempDir()
	dir, err := Create(parent, "r1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := Create(parent, "r1")
	if err != nil || filepath.Base(again) != "r1-2" {
		t.Fatalf("second run of the same id: %s, %v", again, err)
	}
	stderr := filepath.Join(t.TempDir(), "err.log")
	os.WriteFile(stderr, []byte("server says hi\n"), 0o644)
	want := run(t)
	if err := Write(dir, want, &Options{Config: map[string]any{"scenario": "sustained"}, StderrPath: stderr}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{MetricsFile, SummaryFile, ConfigFile, StderrFile, MarkdownFile, HTMLFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("read back differs (-wrote +read):\n%s", diff)
	}
	if !IsRunDir(dir) || IsRunDir(parent) {
		t.Error("IsRunDir")
	}
	sum, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	if !strings.Contains(string(sum), `"passed": true`) || !strings.Contains(string(sum), `"threshold_violations": []`) {
		t.Errorf("summary.json: %s", sum)
	}
}

func TestReadRejects(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, MetricsFile), []byte(`{"schemaVersion":"1","collections":[]}`), 0o644)
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "not a load run") {
		t.Errorf("a results file read as a run: %v", err)
	}
	os.WriteFile(filepath.Join(dir, MetricsFile), []byte(`{"schema_version":"9","histograms":{"unit":"us"}}`), 0o644)
	if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("a future schema: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "nope")); err == nil {
		t.Error("missing directory read")
	}
}

func TestConcatTraces(t *testing.T) {
	a, b, out := t.TempDir(), t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(a, TraceFile), []byte("{\"kind\":\"response\"}\n"), 0o644)
	os.WriteFile(filepath.Join(b, TraceFile), []byte("{\"kind\":\"error\"}\n"), 0o644)
	if err := ConcatTraces(out, []string{a, b}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(out, TraceFile))
	if strings.Count(string(got), "\n") != 4 || !strings.Contains(string(got), `"event":"part"`) {
		t.Errorf("merged trace:\n%s", got)
	}
}
