package threshold

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpspec/mcpspec/loadgen/metrics"
	"github.com/mcpspec/mcpspec/result"
)

// Gate is a default verdict rule of a load run: without a single threshold, a run that saw
// what the gate counts fails. Each can be turned off, and a threshold on the same metric
// judges in its place.
type Gate string

// The gates.
const (
	// GateCrash fails a run in which the server crashed.
	GateCrash Gate = "crash"
	// GateHang fails a run in which a request hung: Hang, Deadlock or Timeout, or still
	// unanswered when the graceful stop was over.
	GateHang Gate = "hang"
	// GateMalformed fails a run that received a malformed answer (Malformed, ProtocolError).
	GateMalformed Gate = "malformed"
	// GateAssertions fails a run whose answers failed their assertions (collection workload).
	GateAssertions Gate = "assertions"
	// GateLeak fails a run whose leak verdict is leak.
	GateLeak Gate = "leak"
)

// gateInfo is a gate with the threshold metrics that override it.
type gateInfo struct {
	gate Gate
	by   []string
	help string
}

var gateTable = []gateInfo{
	{GateCrash, []string{"crashes", "crash_rate"}, "the server crashed"},
	{GateHang, []string{"hangs"}, "a request hung, deadlocked, timed out or was never answered"},
	{GateMalformed, []string{"malformed"}, "an answer was malformed (Malformed, ProtocolError)"},
	{GateAssertions, []string{"assertion_failures"}, "answers failed their assertions (collection workload)"},
	{GateLeak, []string{"leak_kb_per_call", "leak_slope_mb_per_sec", "memory_growth_mb"}, "the leak verdict is leak"},
}

// Gates lists the gates with what each fails a run on and the thresholds that override it.
func Gates() [][3]string {
	out := make([][3]string, len(gateTable))
	for i, g := range gateTable {
		out[i] = [3]string{string(g.gate), g.help, strings.Join(g.by, ", ")}
	}
	return out
}

// ParseGates reads gate names (repeated or comma-separated; "all" is every gate).
func ParseGates(names []string) ([]Gate, error) {
	var out []Gate
	for _, n := range names {
		for _, f := range strings.Split(n, ",") {
			f = strings.ToLower(strings.TrimSpace(f))
			switch {
			case f == "":
			case f == "all":
				for _, g := range gateTable {
					out = append(out, g.gate)
				}
			case slices.ContainsFunc(gateTable, func(g gateInfo) bool { return string(g.gate) == f }):
				out = append(out, Gate(f))
			default:
				return nil, fmt.Errorf("unknown gate %q (want crash, hang, malformed, assertions, leak or all)", f)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// EvaluateGates judges run against the gates, except those in off and those a threshold of ths
// on the same metric overrides; it records them in run.Gates and run.GatesOff, and clears
// run.Passed when one failed. Call it after [Evaluate].
func EvaluateGates(run *metrics.Run, ths []Threshold, off []Gate) {
	run.Gates = run.Gates[:0]
	run.GatesOff = run.GatesOff[:0]
	for _, g := range off {
		run.GatesOff = append(run.GatesOff, string(g))
	}
	for _, g := range gateTable {
		res := gateResult(run, g.gate)
		switch {
		case slices.Contains(off, g.gate):
			res.Off, res.Passed = true, true
		default:
			if i := slices.IndexFunc(ths, func(t Threshold) bool { return t.Scope == "" && slices.Contains(g.by, t.Metric) }); i >= 0 {
				res.OverriddenBy, res.Passed = ths[i].String(), true
			}
		}
		if !res.Passed {
			run.Passed = false
		}
		run.Gates = append(run.Gates, res)
	}
}

// FailedGates returns the gates that failed run.
func FailedGates(run *metrics.Run) []metrics.GateResult {
	var out []metrics.GateResult
	for _, g := range run.Gates {
		if !g.Passed {
			out = append(out, g)
		}
	}
	return out
}

// gateResult counts what gate g looks at in run.
func gateResult(run *metrics.Run, g Gate) metrics.GateResult {
	res := metrics.GateResult{Name: string(g)}
	bc := run.Errors.ByCategory
	switch g {
	case GateCrash:
		c := run.Crashes
		res.Count = crashes(run)
		res.Detail = fmt.Sprintf("%d crashes", res.Count)
		if c.Count > 0 {
			res.Detail = fmt.Sprintf("the server crashed %d times: once per %s requests it took up (%s)", c.Count, perN(c), percent(c.Rate))
			if c.LostToRestarts > 0 {
				res.Detail += fmt.Sprintf("; %d more requests lost to the crashes and restarts", c.LostToRestarts)
			}
		}
	case GateHang:
		res.Count = hangs(run)
		res.Detail = fmt.Sprintf("%d requests hung", res.Count)
		if res.Count > 0 {
			res.Detail = fmt.Sprintf("%d requests hung: %d Hang, %d Deadlock, %d Timeout, %d still unanswered when the run ended",
				res.Count, bc[result.Hang], bc[result.Deadlock], bc[result.Timeout], run.Unanswered)
		}
	case GateMalformed:
		res.Count = malformed(run)
		res.Detail = fmt.Sprintf("%d malformed answers", res.Count)
		if res.Count > 0 {
			res.Detail = fmt.Sprintf("%d malformed answers: %d Malformed, %d ProtocolError", res.Count, bc[result.Malformed], bc[result.ProtocolError])
		}
	case GateAssertions:
		res.Count = run.Errors.AssertionFailures
		res.Detail = fmt.Sprintf("%d answers failed their assertions", res.Count)
	case GateLeak:
		res.Detail = "no leak verdict (resources not sampled)"
		if l := run.Leak; l != nil {
			res.Detail = "leak verdict: " + l.Verdict
			if l.Verdict == "leak" {
				res.Count = 1
				res.Detail = fmt.Sprintf("leak verdict: leak (%.1f KB per request, %.3f MB/s)", l.KBPerCall, l.SlopeMBPerSec)
			}
		}
	}
	res.Passed = res.Count == 0
	return res
}

// crashes counts the server's crashes: at least one when a request saw one.
func crashes(run *metrics.Run) int64 {
	if run.Crashes.Count == 0 && run.Errors.ByCategory[result.Crash] > 0 {
		return 1
	}
	return run.Crashes.Count
}

// hangs counts the requests that hung: Hang, Deadlock, Timeout, and those still unanswered
// when the graceful stop was over.
func hangs(run *metrics.Run) int64 {
	bc := run.Errors.ByCategory
	return bc[result.Hang] + bc[result.Deadlock] + bc[result.Timeout] + run.Unanswered
}

// malformed counts the malformed answers.
func malformed(run *metrics.Run) int64 {
	return run.Errors.ByCategory[result.Malformed] + run.Errors.ByCategory[result.ProtocolError]
}

// perN is how many requests the server took up per crash.
func perN(c metrics.Crashes) string {
	return fmt.Sprintf("%.0f", float64(c.LiveRequests)/float64(c.Count))
}

func percent(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f*100), "0"), ".") + "%"
}
