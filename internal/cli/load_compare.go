package cli

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

// loadDelta is one metric of two load runs side by side.
type loadDelta struct {
	Metric    string  `json:"metric"`
	Base      float64 `json:"base"`
	Current   float64 `json:"current"`
	Change    string  `json:"change"`
	Regressed bool    `json:"regressed"`
	Rule      string  `json:"rule"`
}

// loadComparison is `mcpspec compare` of two load run directories.
type loadComparison struct {
	Base        string      `json:"base"`
	Current     string      `json:"current"`
	Deltas      []loadDelta `json:"deltas"`
	Regressions int         `json:"regressions"`
	// Unrelated says how the two runs differ in what they measured (server, workload,
	// scenario, load): their figures are not comparable, whatever the deltas say.
	Unrelated []string `json:"unrelated,omitempty"`
}

// unrelatedRuns lists how base and cur differ in what they measured: another server, another
// workload (tools or tests), another scenario or model, another load level.
func unrelatedRuns(base, cur *metrics.Run) []string {
	var out []string
	differ := func(what, b, k string) {
		if b != k {
			out = append(out, fmt.Sprintf("%s %s ≠ %s", what, orNone(b), orNone(k)))
		}
	}
	if base.Server.Name != "" && cur.Server.Name != "" {
		differ("server", base.Server.Name, cur.Server.Name)
	} else {
		differ("server", base.Server.Spec, cur.Server.Spec)
	}
	differ("workload", workloadNames(base), workloadNames(cur))
	differ("scenario", base.Scenario.Kind, cur.Scenario.Kind)
	differ("model", base.Scenario.Model, cur.Scenario.Model)
	if base.Scenario.Model == cur.Scenario.Model {
		differ("rate", num3(base.Scenario.Rate)+"/s", num3(cur.Scenario.Rate)+"/s")
		differ("workers", fmt.Sprint(base.Scenario.Concurrent), fmt.Sprint(cur.Scenario.Concurrent))
	}
	return out
}

// workloadNames is the sorted, comma-separated names of a run's workload.
func workloadNames(r *metrics.Run) string {
	var names []string
	for _, w := range r.Scenario.Workload {
		names = append(names, w.Name)
	}
	slices.Sort(names)
	return strings.Join(slices.Compact(names), ",")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// compareLoadRuns judges cur against base: a latency percentile beyond +20% and +5ms, an error
// rate up by more than 1 point, or throughput down by more than 10% is a regression.
func compareLoadRuns(baseName, curName string, base, cur *metrics.Run, ignoreLatency bool) loadComparison {
	c := loadComparison{Base: baseName, Current: curName, Unrelated: unrelatedRuns(base, cur)}
	lat := func(name string, b, k float64) {
		d := loadDelta{Metric: name + " (ms)", Base: b, Current: k, Change: change(b, k), Rule: "+20% and +5ms"}
		d.Regressed = !ignoreLatency && k > b*1.2 && k-b > 5
		c.Deltas = append(c.Deltas, d)
	}
	lat("p50", base.Latency.P50, cur.Latency.P50)
	lat("p95", base.Latency.P95, cur.Latency.P95)
	lat("p99", base.Latency.P99, cur.Latency.P99)
	lat("p99.9", base.Latency.P999, cur.Latency.P999)
	er := loadDelta{Metric: "error rate (%)", Base: base.Errors.Rate * 100, Current: cur.Errors.Rate * 100, Rule: "+1 point"}
	er.Change = fmt.Sprintf("%+.2f points", er.Current-er.Base)
	er.Regressed = er.Current-er.Base > 1
	c.Deltas = append(c.Deltas, er)
	rps := loadDelta{Metric: "requests/s", Base: base.Throughput.RequestsPerSec, Current: cur.Throughput.RequestsPerSec,
		Change: change(base.Throughput.RequestsPerSec, cur.Throughput.RequestsPerSec), Rule: "-10%"}
	rps.Regressed = rps.Current < rps.Base*0.9
	c.Deltas = append(c.Deltas, rps)
	for _, d := range c.Deltas {
		if d.Regressed {
			c.Regressions++
		}
	}
	return c
}

func change(b, k float64) string {
	if b == 0 {
		if k == 0 {
			return "="
		}
		return "new"
	}
	return fmt.Sprintf("%+.1f%%", (k-b)/b*100)
}

func (c loadComparison) write(w io.Writer, markdown bool) error {
	var b strings.Builder
	if markdown {
		fmt.Fprintf(&b, "## Load run %s against %s\n\n| metric | base | current | change | |\n|---|---|---|---|---|\n", c.Current, c.Base)
	} else {
		fmt.Fprintf(&b, "load run %s against %s\n", c.Current, c.Base)
	}
	for _, d := range c.Deltas {
		mark := "ok"
		if d.Regressed {
			mark = "REGRESSION (" + d.Rule + ")"
		}
		if markdown {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", d.Metric, num3(d.Base), num3(d.Current), d.Change, mark)
		} else {
			fmt.Fprintf(&b, "  %-16s %12s → %-12s %-14s %s\n", d.Metric, num3(d.Base), num3(d.Current), d.Change, mark)
		}
	}
	if len(c.Unrelated) > 0 {
		fmt.Fprintf(&b, "\nwarning: these runs measured different things (%s): their figures are not comparable\n", strings.Join(c.Unrelated, "; "))
	}
	switch {
	case c.Regressions > 0:
		fmt.Fprintf(&b, "\n%d regression(s)\n", c.Regressions)
	case len(c.Unrelated) > 0:
		b.WriteString("\nno regression in the figures, but the runs are not comparable\n")
	default:
		b.WriteString("\nno regression\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func num3(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3f", v)
}
