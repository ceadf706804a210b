package cli

import (
	"fmt"
	"io"
	"math"
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
}

// compareLoadRuns judges cur against base: a latency percentile beyond +20% and +5ms, an error
// rate up by more than 1 point, or throughput down by more than 10% is a regression.
func compareLoadRuns(baseName, curName string, base, cur *metrics.Run, ignoreLatency bool) loadComparison {
	c := loadComparison{Base: baseName, Current: curName}
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
	if c.Regressions == 0 {
		b.WriteString("\nno regression\n")
	} else {
		fmt.Fprintf(&b, "\n%d regression(s)\n", c.Regressions)
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
