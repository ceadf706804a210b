package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpspec/mcpspec/collection"
	"github.com/mcpspec/mcpspec/internal/redact"
	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/loadgen/report"
)

// The files of a run directory.
const (
	MetricsFile  = "metrics.json"
	SummaryFile  = "summary.json"
	TraceFile    = "trace.jsonl"
	ConfigFile   = "config.json"
	StderrFile   = "server.stderr.log"
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
)

// Caps on what is read back from a run directory (a named pipe, a device or a larger file is
// refused, unread: a run directory may come from a CI artefact or a repository).
const (
	// MaxMetricsBytes bounds metrics.json.
	MaxMetricsBytes = 256 << 20
	// MaxTraceBytes bounds each trace.jsonl that merge concatenates.
	MaxTraceBytes = 8 << 30
)

// Create makes a new directory for run id under parent (runs/<id>, or runs/<id>-2 … when it
// exists) and returns its path.
func Create(parent, id string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("create run directory: %w", err)
	}
	for n := 1; n < 1000; n++ {
		name := id
		if n > 1 {
			name = fmt.Sprintf("%s-%d", id, n)
		}
		dir := filepath.Join(parent, name)
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", fmt.Errorf("create run directory: %w", err)
		}
	}
	return "", fmt.Errorf("create run directory: too many runs named %s in %s", id, parent)
}

// Options are the extras of [Write].
type Options struct {
	// Config is the resolved configuration, written as config.json (nil: not written).
	Config any
	// StderrPath is a server stderr file to copy in as server.stderr.log ("" or missing: none).
	StderrPath string
	// Masker masks the secrets of the run in every file written, server.stderr.log included
	// (also when the server wrote it there itself); nil masks nothing.
	Masker *collection.Masker
}

// Write writes run's files into dir: metrics.json, summary.json, report.md, report.html, and
// config.json and server.stderr.log when o gives them. The trace is written by the run itself.
func Write(dir string, run *metrics.Run, o *Options) error {
	if o == nil {
		o = &Options{}
	}
	m := o.Masker
	if o.Config != nil {
		if err := writeJSON(filepath.Join(dir, ConfigFile), o.Config, m); err != nil {
			return err
		}
	}
	if o.StderrPath != "" {
		if err := copyFile(o.StderrPath, filepath.Join(dir, StderrFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if err := MaskStderr(dir, m); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, MetricsFile), run, m); err != nil {
		return err
	}
	return render(dir, run, m)
}

// MaskStderr masks the secrets m holds in dir's server.stderr.log, which the server wrote
// itself (nil m: nothing to do).
func MaskStderr(dir string, m *collection.Masker) error {
	return redact.MaskFile(filepath.Join(dir, StderrFile), m)
}

// Render writes summary.json, report.md and report.html of run into dir.
func Render(dir string, run *metrics.Run) error { return render(dir, run, nil) }

// render is [Render] masking with m.
func render(dir string, run *metrics.Run, m *collection.Masker) error {
	if err := writeJSON(filepath.Join(dir, SummaryFile), NewSummary(run), m); err != nil {
		return err
	}
	var md, page bytes.Buffer
	if err := report.Markdown(&md, run); err != nil {
		return err
	}
	if err := report.HTML(&page, run); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, MarkdownFile), []byte(m.Mask(md.String())), 0o644); err != nil {
		return fmt.Errorf("write report.md: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, HTMLFile), []byte(m.Mask(page.String())), 0o644); err != nil {
		return fmt.Errorf("write report.html: %w", err)
	}
	return nil
}

// Read reads the metrics.json of a run directory (or the file itself): a regular file of at
// most [MaxMetricsBytes] whose raw data passes [metrics.Run.Check].
func Read(path string) (*metrics.Run, error) {
	p := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		p = filepath.Join(path, MetricsFile)
	}
	b, err := regfile.ReadFile(p, MaxMetricsBytes)
	if err != nil {
		return nil, fmt.Errorf("read run %s: %w", path, err)
	}
	var run metrics.Run
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&run); err != nil {
		return nil, fmt.Errorf("read run %s: %s is not a load run's metrics.json: %w", path, p, err)
	}
	if run.SchemaVersion == "" || run.Histograms.Unit == "" {
		return nil, fmt.Errorf("read run %s: %s is not a load run's metrics.json (no schema_version or histograms)", path, p)
	}
	if run.SchemaVersion != metrics.SchemaVersion {
		return nil, fmt.Errorf("read run %s: metrics schema %q, this mcpspec reads %q", path, run.SchemaVersion, metrics.SchemaVersion)
	}
	if err := run.Check(); err != nil {
		return nil, fmt.Errorf("read run %s: %w", path, err)
	}
	return &run, nil
}

// IsRunDir reports whether path is a run directory (or a metrics.json of one).
func IsRunDir(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	if st.IsDir() {
		_, err = os.Stat(filepath.Join(path, MetricsFile))
		return err == nil
	}
	return filepath.Base(path) == MetricsFile
}

// Summary is summary.json: the verdict of a run for CI.
type Summary struct {
	RunID       string              `json:"run_id"`
	Passed      bool                `json:"passed"`
	Interrupted bool                `json:"interrupted,omitempty"`
	Scenario    string              `json:"scenario"`
	Requests    int64               `json:"requests"`
	RPS         float64             `json:"requests_per_sec"`
	ErrorRate   float64             `json:"error_rate"`
	P50Ms       float64             `json:"p50_ms"`
	P99Ms       float64             `json:"p99_ms"`
	Thresholds  int                 `json:"thresholds"`
	Violations  []metrics.Violation `json:"threshold_violations"`
	Leak        string              `json:"leak,omitempty"`
}

// NewSummary summarises run.
func NewSummary(run *metrics.Run) Summary {
	s := Summary{
		RunID: run.RunID, Passed: run.Passed, Interrupted: run.Interrupted, Scenario: run.Scenario.Kind,
		Requests: run.Throughput.TotalRequests, RPS: run.Throughput.RequestsPerSec, ErrorRate: run.Errors.Rate,
		P50Ms: run.Latency.P50, P99Ms: run.Latency.P99, Thresholds: len(run.Thresholds), Violations: run.ThresholdViolations,
	}
	if s.Violations == nil {
		s.Violations = []metrics.Violation{}
	}
	if run.Leak != nil {
		s.Leak = run.Leak.Verdict
	}
	return s
}

func writeJSON(path string, v any, m *collection.Masker) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	if err := os.WriteFile(path, []byte(m.Mask(string(b))+"\n"), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	return nil
}

func copyFile(from, to string) error {
	in, err := regfile.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(to), err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", filepath.Base(to), err)
	}
	return out.Close()
}

// ConcatTraces writes the trace.jsonl files of dirs into dir's, each part after a line naming
// it (a merged run's trace).
func ConcatTraces(dir string, dirs []string) error {
	out, err := os.Create(filepath.Join(dir, TraceFile))
	if err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	defer out.Close()
	for _, d := range dirs {
		in, err := regfile.OpenLimit(filepath.Join(d, TraceFile), MaxTraceBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read trace: %w", err)
		}
		name, _ := json.Marshal("trace of " + strings.TrimSuffix(d, "/"))
		fmt.Fprintf(out, `{"ts":0.000000,"kind":"scenario_event","event":"part","message":%s}`+"\n", name)
		_, err = io.Copy(out, io.LimitReader(in, MaxTraceBytes))
		in.Close()
		if err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
	}
	return out.Close()
}
