package mcpserve

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/internal/regfile"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
)

// maxResults bounds the results file summarize_report reads.
const maxResults = 64 << 20

// maxFailures bounds the failures a summary lists.
const maxFailures = 20

// resultsSummary summarises a results document (what `mcpspec test --json` prints): the
// counts, then one line per failed or errored test.
func resultsSummary(doc []byte) (string, bool) {
	var run result.Run
	if err := json.Unmarshal(doc, &run); err != nil || run.Collections == nil {
		return "", false
	}
	c := run.Counts()
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d passed, %d failed, %d errored, %d skipped", textfmt.Plural(c.Total, "test"), c.Passed, c.Failed, c.Errored, c.Skipped)
	if run.Interrupted {
		b.WriteString(" (interrupted)")
	}
	n := 0
	for _, col := range run.Collections {
		if col == nil {
			continue
		}
		for _, t := range col.Tests {
			if t == nil || (t.Status != result.Failed && t.Status != result.Errored) {
				continue
			}
			n++
			if n > maxFailures {
				continue
			}
			fmt.Fprintf(&b, "\n%s %s: %s", strings.ToUpper(string(t.Status)), textfmt.Clean(t.Name), textfmt.Clean(testProblem(t)))
		}
	}
	if n > maxFailures {
		fmt.Fprintf(&b, "\n… and %d more", n-maxFailures)
	}
	return b.String(), true
}

// testProblem is a failed test's first problem in one line.
func testProblem(t *result.Test) string {
	if t.Error != nil {
		return fmt.Sprintf("%s: %s", t.Error.Category, cut(t.Error.Message, 300))
	}
	if len(t.Failures) > 0 {
		f := t.Failures[0]
		return cut(f.Message, 300)
	}
	return string(t.Status)
}

// metricsSummary summarises a load run's metrics.json.
func metricsSummary(m map[string]any) string {
	num := func(path ...string) float64 {
		var v any = m
		for _, p := range path {
			mm, ok := v.(map[string]any)
			if !ok {
				return 0
			}
			v = mm[p]
		}
		f, _ := v.(float64)
		return f
	}
	verdict := "passed"
	if p, ok := m["passed"].(bool); ok && !p {
		verdict = "FAILED"
	}
	return fmt.Sprintf("load %s: %.0f requests, %.1f/s, p50 %.1f ms, p99 %.1f ms, %.0f errors (%.2f%%), %.0f crashes, %.0f hangs",
		verdict, num("throughput", "total_requests"), num("throughput", "requests_per_sec"),
		num("latency_ms", "p50"), num("latency_ms", "p99"), num("errors", "total"), 100*num("errors", "rate"),
		num("crashes"), num("hang_count"))
}

func (s *server) summarizeReport(ctx context.Context, in SummarizeReportIn) (Output, error) {
	p, err := s.opts.Policy.Path(in.Path)
	if err != nil {
		return Output{}, err
	}
	st, err := os.Stat(p)
	if err != nil {
		return Output{}, err
	}
	if st.IsDir() {
		out, err := s.run(ctx, time.Minute, "report", "--json", "--", p)
		if err != nil {
			return out, err
		}
		out.Summary = "report: " + out.Outcome
		if m, ok := out.Report.(map[string]any); ok && out.ExitCode == 0 {
			out.Summary = metricsSummary(m)
		}
		return out, nil
	}
	doc, err := regfile.ReadFile(p, maxResults)
	if err != nil {
		return Output{}, &RefusedError{Msg: err.Error()}
	}
	sum, ok := resultsSummary(doc)
	if !ok {
		return Output{}, &RefusedError{Msg: fmt.Sprintf("%s is not a results file (mcpspec test's json report) nor a load run directory", in.Path)}
	}
	var v any
	_ = json.Unmarshal(doc, &v)
	return Output{Command: "", ExitCode: 0, Outcome: "ok", Summary: sum, Report: v}, nil
}
