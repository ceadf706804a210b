package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

// Markdown writes report.md for run (seed 000 §17.3's layout).
func Markdown(w io.Writer, run *metrics.Run) error {
	if run == nil {
		return fmt.Errorf("report: nil run")
	}
	var b strings.Builder
	st := status(run)
	icon := map[string]string{"PASS": "✅", "FAIL": "❌", "INTERRUPTED": "⚠️"}[st]
	fmt.Fprintf(&b, "# Load run %s\n\n", mdEsc(run.RunID))
	verdict := fmt.Sprintf("%s %s", icon, st)
	var why []string
	if n := len(run.ThresholdViolations); n > 0 {
		why = append(why, fmt.Sprintf("%d threshold violation%s", n, plural(n)))
	}
	for _, g := range run.Gates {
		if !g.Passed {
			why = append(why, "gate "+g.Name)
		}
	}
	if len(why) > 0 {
		verdict += " (" + strings.Join(why, ", ") + ")"
	}
	fmt.Fprintf(&b, "**Status:** %s  \n", verdict)
	fmt.Fprintf(&b, "**Server:** %s (%s)  \n", mdEsc(run.Server.Spec), mdEsc(run.Server.Transport))
	sc := run.Scenario
	model := fmt.Sprintf("%d worker%s", sc.Concurrent, plural(sc.Concurrent))
	if sc.Model == "open" {
		model = fmt.Sprintf("%s/s, at most %d in flight", fmtNum(sc.Rate), sc.MaxInFlight)
	}
	fmt.Fprintf(&b, "**Scenario:** %s, %s model, %s, %ss  \n", sc.Kind, sc.Model, model, fmtNum(run.DurationSecs))
	fmt.Fprintf(&b, "**Started:** %s\n\n", run.StartedAt.Format("2006-01-02 15:04:05 UTC"))

	b.WriteString("## Summary\n\n")
	fmt.Fprintf(&b, "- Total requests: %d\n", run.Throughput.TotalRequests)
	fmt.Fprintf(&b, "- Throughput: %s req/s", fmtNum(run.Throughput.RequestsPerSec))
	if run.Throughput.OfferedRate > 0 {
		fmt.Fprintf(&b, " (offered %s/s)", fmtNum(run.Throughput.OfferedRate))
	}
	fmt.Fprintf(&b, "\n- Error rate: %.2f%%\n", run.Errors.Rate*100)
	fmt.Fprintf(&b, "- Deadlocks: %d Hangs: %d Unanswered at the end: %d\n", run.DeadlockCount, run.HangCount, run.Unanswered)
	if c := run.Crashes; c.Count > 0 {
		fmt.Fprintf(&b, "- Crashes: %d, %.2f%% of the %d requests the server took up; %d more requests lost to the crashes and restarts\n",
			c.Count, c.Rate*100, c.LiveRequests, c.LostToRestarts)
	}
	g := run.Analysis.Grades
	fmt.Fprintf(&b, "- Grades: latency %s, throughput %s, errors %s\n\n", g.Latency, g.Throughput, g.Errors)
	for _, n := range run.Analysis.Notes {
		fmt.Fprintf(&b, "> %s\n", mdEsc(n))
	}
	if len(run.Analysis.Notes) > 0 {
		b.WriteString("\n")
	}

	b.WriteString("## Latency\n\n| | p50 | p95 | p99 | p999 | max |\n|---|---|---|---|---|---|\n")
	l, s := run.Latency, run.Service
	p99 := fmtMs(l.P99)
	if violated(run, "p99") {
		p99 = "**" + p99 + "**"
	}
	fmt.Fprintf(&b, "| from intended send | %s | %s | %s | %s | %s |\n", fmtMs(l.P50), fmtMs(l.P95), p99, fmtMs(l.P999), fmtMs(l.Max))
	fmt.Fprintf(&b, "| service | %s | %s | %s | %s | %s |\n\n", fmtMs(s.P50), fmtMs(s.P95), fmtMs(s.P99), fmtMs(s.P999), fmtMs(s.Max))
	b.WriteString("```\n" + asciiTimeline(run) + "```\n\n")

	if len(run.PerOp) > 0 {
		b.WriteString("| operation | requests | errors | p50 | p99 | assertion failures |\n|---|---|---|---|---|---|\n")
		for _, o := range run.PerOp {
			fmt.Fprintf(&b, "| %s (%s) | %d | %d | %s | %s | %d |\n", mdEsc(o.Name), o.Kind, o.Requests, o.Errors, fmtMs(o.Latency.P50), fmtMs(o.Latency.P99), o.AssertionFailures)
		}
		b.WriteString("\n")
	}
	if len(run.Stages) > 0 {
		b.WriteString("## Stages\n\n| stage | target | req/s | p99 | error rate | verdict |\n|---|---|---|---|---|---|\n")
		for _, st := range run.Stages {
			v := "good"
			if !st.Good {
				v = st.BreakNotes
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %.2f%% | %s |\n", st.Name, fmtNum(st.Target), fmtNum(st.RPS), fmtMs(st.Latency.P99), st.ErrorRate*100, mdEsc(v))
		}
		b.WriteString("\n")
	}

	b.WriteString("## Errors\n\n")
	any := false
	for _, c := range sortedCounts(run.Errors.ByCategory) {
		if c.V == 0 {
			continue
		}
		if !any {
			b.WriteString("| Category | Count |\n|---|---|\n")
			any = true
		}
		fmt.Fprintf(&b, "| %s | %d |\n", c.K, c.V)
	}
	if !any {
		b.WriteString("No request failed.\n")
	}
	for _, m := range run.Errors.Top {
		fmt.Fprintf(&b, "- %s, %s ×%d: %s\n", mdEsc(m.Op), m.Category, m.Count, mdEsc(m.Message))
	}
	b.WriteString("\n## Process\n\n")
	smp := run.Sampling
	if p := run.Process; p != nil {
		fmt.Fprintf(&b, "Peak RSS: %.1f MB · Final RSS: %.1f MB · Avg CPU: %.1f%%\n", p.PeakRSSMB, p.FinalRSSMB, p.AvgCPUPct)
		if smp != nil && smp.Source != "" {
			fmt.Fprintf(&b, "\nSampled: %s, every %ss", mdEsc(smp.Source), fmtNum(smp.IntervalSecs))
			if smp.Failures > 0 {
				fmt.Fprintf(&b, "; %d readings failed (last: %s)", smp.Failures, mdEsc(smp.LastError))
			}
			b.WriteString("\n")
		}
	} else if smp != nil && smp.Off != "" {
		fmt.Fprintf(&b, "Not sampled: %s.\n", mdEsc(strings.TrimSuffix(smp.Off, ".")))
	} else {
		b.WriteString("Not sampled.\n")
	}
	if lk := run.Leak; lk != nil {
		fmt.Fprintf(&b, "\nLeak analysis: **%s** (slope %.4f MB/s, R² %.2f, %.2f KB per request)", lk.Verdict, lk.SlopeMBPerSec, lk.R2, lk.KBPerCall)
		if lk.Reason != "" {
			fmt.Fprintf(&b, ": %s", mdEsc(lk.Reason))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Threshold violations\n\n")
	if len(run.ThresholdViolations) == 0 {
		if len(run.Thresholds) == 0 {
			b.WriteString("No thresholds were set.\n")
		} else {
			fmt.Fprintf(&b, "None: all %d thresholds held.\n", len(run.Thresholds))
		}
	}
	for _, v := range run.ThresholdViolations {
		fmt.Fprintf(&b, "- ❌ **%s**: expected %s, got %s\n", v.Metric, v.Expected, v.Actual)
	}
	b.WriteString("\n## Gates\n\n")
	for _, g := range run.Gates {
		mark := "✅"
		switch {
		case g.Off:
			mark = "⏸ off:"
		case g.OverriddenBy != "":
			mark = "↪ judged by `" + mdEsc(g.OverriddenBy) + "`:"
		case !g.Passed:
			mark = "❌"
		}
		fmt.Fprintf(&b, "- %s **%s**: %s\n", mark, g.Name, mdEsc(g.Detail))
	}
	b.WriteString("\n## Trace\n\nFull trace: `./trace.jsonl` (one event per request).\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func violated(run *metrics.Run, metric string) bool {
	for _, v := range run.ThresholdViolations {
		if v.Metric == metric {
			return true
		}
	}
	return false
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// mdEsc escapes text that a server, a command line or another run's file chose (an error
// message, an operation name, a spec) for markdown: it can open no link, image, HTML tag, code
// span or table cell ([textfmt.MarkdownText]).
func mdEsc(s string) string { return textfmt.MarkdownText(s) }

// asciiTimeline is a small text chart of p99 and throughput per second.
func asciiTimeline(run *metrics.Run) string {
	tl := run.Timeline
	if len(tl) == 0 {
		return "(no timeline)\n"
	}
	step := max(1, (len(tl)+29)/30)
	maxP, maxR := 0.0, 0.0
	for _, s := range tl {
		maxP, maxR = max(maxP, s.P99), max(maxR, float64(s.Requests))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%6s %-32s %-26s\n", "t", "p99", "requests/s")
	for i := 0; i < len(tl); i += step {
		s := tl[i]
		pb, rb := 0, 0
		if maxP > 0 {
			pb = int(s.P99 / maxP * 30)
		}
		if maxR > 0 {
			rb = int(float64(s.Requests) / maxR * 20)
		}
		fmt.Fprintf(&b, "%5ds %-32s %-26s\n", s.T, strings.Repeat("█", pb)+" "+fmtMs(s.P99), strings.Repeat("▒", rb)+" "+fmt.Sprint(s.Requests))
	}
	return b.String()
}
