package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/result"
)

//go:embed report.tmpl
var htmlSource string

// htmlTmpl is parsed on first use: parsing it at init cost every verb, `version` included.
var htmlTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Funcs(template.FuncMap{
		"ms":     fmtMs,
		"pct":    func(v float64) string { return fmt.Sprintf("%.2f%%", v*100) },
		"num":    func(v float64) string { return fmtNum(v) },
		"spark":  func(ys []float64) template.HTML { return template.HTML(sparkline(ys)) },
		"lower":  strings.ToLower,
		"sorted": sortedCounts,
		"nonzero": func(m map[result.Category]int64) bool {
			return slices.ContainsFunc(sortedCounts(m), func(c kv) bool { return c.V > 0 })
		},
	}).Parse(htmlSource))
})

// HTML writes report.html for run: self-contained, charts as inline SVG, no script.
func HTML(w io.Writer, run *metrics.Run) error {
	if run == nil {
		return fmt.Errorf("report: nil run")
	}
	data := struct {
		R      *metrics.Run
		Charts []template.HTML
		Status string
	}{R: run, Charts: charts(run), Status: status(run)}
	if err := htmlTmpl().Execute(w, data); err != nil {
		return fmt.Errorf("render report.html: %w", err)
	}
	return nil
}

func status(run *metrics.Run) string {
	switch {
	case !run.Passed:
		return "FAIL"
	case run.Interrupted:
		return "INTERRUPTED"
	}
	return "PASS"
}

type kv struct {
	K string
	V int64
}

// sortedCounts lists a count map, largest first, then by name.
func sortedCounts(m map[result.Category]int64) []kv {
	out := make([]kv, 0, len(m))
	for k, v := range m {
		out = append(out, kv{string(k), v})
	}
	slices.SortFunc(out, func(a, b kv) int {
		if a.V != b.V {
			return int(b.V - a.V)
		}
		return strings.Compare(a.K, b.K)
	})
	return out
}

// fmtMs writes a latency in milliseconds readably.
func fmtMs(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 1:
		return fmt.Sprintf("%.1f ms", v)
	case v == 0:
		return "0 ms"
	}
	return fmt.Sprintf("%.0f µs", math.Round(v*1000))
}
