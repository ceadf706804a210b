package threshold

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
)

// Op compares a measured value with a threshold's limit.
type Op string

// The comparisons.
const (
	LE Op = "<="
	LT Op = "<"
	GE Op = ">="
	GT Op = ">"
)

// Threshold is one limit on one metric, for the whole run or one operation.
type Threshold struct {
	// Metric is one of [Metrics].
	Metric string
	// Scope names an operation (a tool or test); "" is the whole run.
	Scope string
	Op    Op
	// Limit is in the metric's unit: milliseconds for latencies, a fraction for error_rate,
	// requests per second for rps, MB for memory_growth_mb …
	Limit float64
	// Spec is the text it was parsed from.
	Spec string
}

// metric describes one metric a threshold can name.
type metric struct {
	name, unit, help string
	// def is the comparison "=" means.
	def Op
	// perOp says whether it can be scoped to an operation.
	perOp bool
}

var metricTable = []metric{
	{"p50", "ms", "median latency", LE, true},
	{"p90", "ms", "90th percentile latency", LE, true},
	{"p95", "ms", "95th percentile latency", LE, true},
	{"p99", "ms", "99th percentile latency", LE, true},
	{"p999", "ms", "99.9th percentile latency", LE, true},
	{"max", "ms", "largest latency", LE, true},
	{"mean", "ms", "mean latency", LE, true},
	{"error_rate", "", "failed requests / requests (0.01 or 1%)", LE, true},
	{"errors", "", "failed requests", LE, true},
	{"assertion_failures", "", "answers whose assertions failed (collection workload)", LE, true},
	{"rps", "/s", "requests finished per second", GE, false},
	{"memory_growth_mb", "MB", "server RSS growth over the run (needs resource sampling)", LE, false},
	{"leak_kb_per_call", "KB", "leak analysis: RSS growth per request", LE, false},
	{"leak_slope_mb_per_sec", "MB/s", "leak analysis: slope of RSS over time", LE, false},
	{"drift_ms_per_sec", "ms/s", "slope of the mean latency over the run", LE, false},
	{"hangs", "", "requests that hung: Hang, Deadlock, Timeout, or unanswered when the run ended", LE, false},
	{"crashes", "", "times the server crashed", LE, false},
	{"crash_rate", "", "crashes / requests sent while the server was up (0.02 or 2%)", LE, false},
	{"malformed", "", "malformed answers (Malformed, ProtocolError)", LE, false},
}

// Metrics lists the metric names a threshold may use, with a short description.
func Metrics() [][2]string {
	out := make([][2]string, len(metricTable))
	for i, m := range metricTable {
		out[i] = [2]string{m.name, m.help}
	}
	return out
}

func lookup(name string) (metric, bool) {
	name = strings.ToLower(name)
	switch name {
	case "p99.9":
		name = "p999"
	case "p50_latency", "p95_latency", "p99_latency", "p999_latency":
		name = strings.TrimSuffix(name, "_latency")
	case "min_rps":
		name = "rps"
	}
	for _, m := range metricTable {
		if m.name == name {
			return m, true
		}
	}
	return metric{}, false
}

// Parse reads "METRIC[:SCOPE] OP VALUE": OP is <=, <, >=, > or = (the metric's natural
// direction: at most for latencies and errors, at least for rps). Latencies take Go durations
// (500ms, 1.5s) or plain milliseconds; error_rate a fraction or a percentage.
func Parse(s string) (Threshold, error) {
	spec := strings.TrimSpace(s)
	i := strings.IndexAny(spec, "<>=")
	if i <= 0 {
		return Threshold{}, fmt.Errorf("threshold %q: want METRIC<=VALUE, e.g. p99<=500ms", s)
	}
	name, rest := strings.TrimSpace(spec[:i]), spec[i:]
	var op Op
	switch {
	case strings.HasPrefix(rest, "<="):
		op, rest = LE, rest[2:]
	case strings.HasPrefix(rest, ">="):
		op, rest = GE, rest[2:]
	case strings.HasPrefix(rest, "<"):
		op, rest = LT, rest[1:]
	case strings.HasPrefix(rest, ">"):
		op, rest = GT, rest[1:]
	default:
		rest = rest[1:]
	}
	scope := ""
	if n, sc, ok := strings.Cut(name, ":"); ok {
		name, scope = strings.TrimSpace(n), strings.TrimSpace(sc)
	}
	m, ok := lookup(name)
	if !ok {
		names := make([]string, len(metricTable))
		for i, m := range metricTable {
			names[i] = m.name
		}
		return Threshold{}, fmt.Errorf("threshold %q: unknown metric %q (want one of %s)", s, name, strings.Join(names, ", "))
	}
	if scope != "" && !m.perOp {
		return Threshold{}, fmt.Errorf("threshold %q: %s applies to the whole run, not to %q", s, m.name, scope)
	}
	if op == "" {
		op = m.def
	}
	v, err := parseValue(m, strings.TrimSpace(rest))
	if err != nil {
		return Threshold{}, fmt.Errorf("threshold %q: %w", s, err)
	}
	return Threshold{Metric: m.name, Scope: scope, Op: op, Limit: v, Spec: spec}, nil
}

func parseValue(m metric, v string) (float64, error) {
	if v == "" {
		return 0, fmt.Errorf("no value")
	}
	switch {
	case m.unit == "ms" && strings.IndexFunc(v, func(r rune) bool { return r >= 'a' && r <= 'z' || r == 'µ' }) >= 0:
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("%q is not a duration (500ms, 1.5s)", v)
		}
		return float64(d) / float64(time.Millisecond), nil
	case (m.name == "error_rate" || m.name == "crash_rate") && strings.HasSuffix(v, "%"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if err != nil || f < 0 || f > 100 {
			return 0, fmt.Errorf("%q is not a percentage", v)
		}
		return f / 100, nil
	}
	v = strings.TrimSuffix(strings.TrimSuffix(v, "/s"), "MB")
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("%q is not a non-negative number", v)
	}
	if (m.name == "error_rate" || m.name == "crash_rate") && f > 1 {
		return 0, fmt.Errorf("%s %g is above 1 (write 5%% or 0.05)", m.name, f)
	}
	return f, nil
}

// String writes the threshold back in canonical form.
func (t Threshold) String() string {
	name := t.Metric
	if t.Scope != "" {
		name += ":" + t.Scope
	}
	return name + string(t.Op) + format(t.Metric, t.Limit)
}

// format writes a value in the metric's unit.
func format(name string, v float64) string {
	m, _ := lookup(name)
	switch {
	case m.unit == "ms":
		return strconv.FormatFloat(v, 'f', -1, 64) + "ms"
	case name == "error_rate" || name == "crash_rate":
		return strconv.FormatFloat(v*100, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + m.unit
}

// Evaluate judges run against ths and records the verdicts in run.Thresholds,
// run.ThresholdViolations, run.ThresholdSpecs and run.Passed.
func Evaluate(run *metrics.Run, ths []Threshold) {
	run.Thresholds = run.Thresholds[:0]
	run.ThresholdViolations = run.ThresholdViolations[:0]
	run.ThresholdSpecs = run.ThresholdSpecs[:0]
	for _, t := range ths {
		res := metrics.ThresholdResult{Metric: t.Metric, Scope: t.Scope, Expected: string(t.Op) + format(t.Metric, t.Limit)}
		v, ok := measure(run, t)
		switch {
		case !ok:
			res.Actual = "not measured"
		case leakMetric(t.Metric) && run.Leak.Verdict == "indeterminate":
			// The verdict cannot tell a leak from a warm-up yet: neither can its figure.
			res.Actual = format(t.Metric, round(v)) + " (indeterminate: " + run.Leak.Reason + ")"
			res.Passed, res.Indeterminate = true, true
		default:
			res.Actual = format(t.Metric, round(v))
			res.Passed = compare(v, t.Op, t.Limit)
		}
		run.Thresholds = append(run.Thresholds, res)
		run.ThresholdSpecs = append(run.ThresholdSpecs, t.String())
		if !res.Passed {
			name := t.Metric
			if t.Scope != "" {
				name += ":" + t.Scope
			}
			run.ThresholdViolations = append(run.ThresholdViolations, metrics.Violation{Metric: name, Expected: res.Expected, Actual: res.Actual})
		}
	}
	run.Passed = len(run.ThresholdViolations) == 0
}

// ParseAll parses specs, joining every problem.
func ParseAll(specs []string) ([]Threshold, error) {
	var out []Threshold
	var errs []string
	for _, s := range specs {
		t, err := Parse(s)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		out = append(out, t)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

func round(v float64) float64 {
	return float64(int64(v*1000+0.5)) / 1000
}

func compare(v float64, op Op, limit float64) bool {
	switch op {
	case LE:
		return v <= limit
	case LT:
		return v < limit
	case GE:
		return v >= limit
	case GT:
		return v > limit
	}
	return false
}

// leakMetric reports whether metric is one of the leak analysis' figures.
func leakMetric(metric string) bool {
	return metric == "leak_kb_per_call" || metric == "leak_slope_mb_per_sec"
}

// measure reads the value a threshold names from run.
func measure(run *metrics.Run, t Threshold) (float64, bool) {
	lat, requests, errs, failures := run.Latency, run.Throughput.TotalRequests, run.Errors.Total, run.Errors.AssertionFailures
	if t.Scope != "" {
		i := slices.IndexFunc(run.PerOp, func(o metrics.OpMetrics) bool { return o.Name == t.Scope })
		if i < 0 {
			return 0, false
		}
		op := run.PerOp[i]
		lat, requests, errs, failures = op.Latency, op.Requests, op.Errors, op.AssertionFailures
	}
	if v, ok := lat.Percentile(t.Metric); ok {
		return v, lat.Count > 0
	}
	switch t.Metric {
	case "error_rate":
		if requests == 0 {
			return 0, false
		}
		return float64(errs) / float64(requests), true
	case "errors":
		return float64(errs), true
	case "assertion_failures":
		return float64(failures), true
	case "rps":
		return run.Throughput.RequestsPerSec, true
	case "hangs":
		return float64(hangs(run)), true
	case "crashes":
		return float64(crashes(run)), true
	case "crash_rate":
		return run.Crashes.Rate, run.Crashes.LiveRequests > 0
	case "malformed":
		return float64(malformed(run)), true
	case "drift_ms_per_sec":
		return run.Analysis.LatencyDriftMsPerSec, len(run.Timeline) >= 3
	case "memory_growth_mb":
		if run.Process == nil || len(run.Process.Samples) == 0 {
			return 0, false
		}
		return run.Process.PeakRSSMB - run.Process.Samples[0].RSSMB, true
	case "leak_kb_per_call":
		if run.Leak == nil || run.Leak.NotFitted {
			return 0, false
		}
		return run.Leak.KBPerCall, true
	case "leak_slope_mb_per_sec":
		if run.Leak == nil || run.Leak.NotFitted {
			return 0, false
		}
		return run.Leak.SlopeMBPerSec, true
	}
	return 0, false
}
