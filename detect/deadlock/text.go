package deadlock

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/result"
)

// WriteText writes the report for a terminal: one line per probe, the skipped tools, the
// counts and the verdict.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Deadlock probe of %s %s: %d concurrent calls, hang after %s, grace %s\n\n",
		orUnknown(r.Server.Name), r.Server.Version, r.Concurrency, time.Duration(r.HangAfterMs)*time.Millisecond, time.Duration(r.GraceMs)*time.Millisecond)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, p := range r.Probes {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", p.Name, strings.ToUpper(string(p.Verdict)), p.Diagnosis)
		if p.AfterDeadlock != "" {
			fmt.Fprintf(tw, "  \t\t%s\n", p.AfterDeadlock)
		}
	}
	_ = tw.Flush()
	if len(r.Skipped) > 0 {
		b.WriteString("\nNot probed:\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(&b, "  %s: %s\n", s.Tool, s.Reason)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\nNote: %s\n", n)
	}
	if r.Incomplete != "" {
		fmt.Fprintf(&b, "\nIncomplete: %s\n", r.Incomplete)
	}
	lost := ""
	if r.LostCount > 0 {
		lost = fmt.Sprintf(", lost %d", r.LostCount)
	}
	fmt.Fprintf(&b, "\n%s: deadlock_count %d, hang_count %d, slow_count %d, ok %d, crash %d%s, failed %d\n",
		verdictLine(r), r.DeadlockCount, r.HangCount, r.SlowCount, r.OKCount, r.CrashCount, lost, r.FailedCount)
	_, err := io.WriteString(w, b.String())
	return err
}

func verdictLine(r *Report) string {
	switch r.Verdict {
	case VerdictDeadlock:
		return "DEADLOCK DETECTED"
	case VerdictCrash:
		return "CRASH DETECTED"
	case VerdictLost:
		return "LOST RESPONSE DETECTED"
	case VerdictSlow:
		return "No deadlock; concurrency degrades latency"
	case VerdictIncomplete:
		return "No deadlock found, but the probe did not finish"
	case VerdictHang:
		return "HANG: no deadlock shown, but calls went unanswered even alone or were slow alone"
	case VerdictNotTested:
		return "NOT TESTED: no tool was called"
	}
	return "No deadlock"
}

func orUnknown(s string) string {
	if s == "" {
		return "the server"
	}
	return s
}

// Tests returns the report as test cases, one per probe and one per skipped tool: a deadlock
// or a crash is a failed case whose failure carries the diagnosis and the evidence.
func (r *Report) Tests() []*result.Test {
	var out []*result.Test
	for _, p := range r.Probes {
		t := &result.Test{ID: "deadlock/" + p.Name, Name: "deadlock: " + p.Name, Kind: "deadlock", Target: p.Tool,
			Status: result.Passed, Latency: detect.MaxLatency(append(append([]detect.Outcome(nil), p.Sequential...), p.Concurrent...))}
		if p.Tool == "" {
			t.Target = p.Method
		}
		t.Response = p.Diagnosis
		switch p.Verdict {
		case VerdictDeadlock, VerdictCrash, VerdictLost:
			t.Status = result.Failed
			f := result.Failure{Assertion: "deadlock",
				Expected: fmt.Sprintf("every call answered within %s (+ %s grace)", time.Duration(r.HangAfterMs)*time.Millisecond, time.Duration(r.GraceMs)*time.Millisecond),
				Actual:   evidence(p),
				Message:  p.Diagnosis}
			switch p.Verdict {
			case VerdictCrash:
				f.Expected = "the server stays up"
			case VerdictLost:
				f.Assertion, f.Expected = "lost-response", "every call's answer delivered on its stream"
			}
			t.Failures = []result.Failure{f}
		case VerdictHang:
			t.Status = result.Errored
			t.Error = &result.Error{Category: result.Hang, Message: p.Diagnosis}
		case VerdictIncomplete:
			t.Status = result.Errored
			t.Error = &result.Error{Category: result.Cancelled, Message: p.Diagnosis}
		}
		t.Attempts = []result.Attempt{{Status: t.Status, Latency: t.Latency, Failures: t.Failures, Error: t.Error}}
		out = append(out, t)
	}
	for _, s := range r.Skipped {
		out = append(out, &result.Test{ID: "deadlock/" + s.Tool, Name: "deadlock: " + s.Tool, Kind: "deadlock", Target: s.Tool,
			Status: result.Skipped, SkipReason: s.Reason, Attempts: []result.Attempt{}})
	}
	return out
}

// evidence sums up the calls of a probe: counts by class, the slowest answer, the first
// failure, and the ping after a deadlock.
func evidence(p Probe) string {
	var parts []string
	if len(p.Sequential) > 0 {
		c := detect.Count(p.Sequential)
		parts = append(parts, fmt.Sprintf("alone: %d ok, %d slow, %d deadlocked, %d crashed of %d", c.OK, c.Slow, c.Deadlock, c.Crash, len(p.Sequential)))
	}
	c := detect.Count(p.Concurrent)
	parts = append(parts, fmt.Sprintf("together: %d ok, %d slow, %d deadlocked, %d crashed of %d", c.OK, c.Slow, c.Deadlock, c.Crash, len(p.Concurrent)))
	for _, o := range p.Concurrent {
		if o.Class == detect.Deadlock || o.Class == detect.Crash {
			parts = append(parts, fmt.Sprintf("e.g. call %d (%s): %s", o.Index, orMethod(o), o.Message))
			break
		}
	}
	if p.AfterDeadlock != "" {
		parts = append(parts, p.AfterDeadlock)
	}
	return strings.Join(parts, "; ")
}

func orMethod(o detect.Outcome) string {
	if o.Tool != "" {
		return o.Tool
	}
	return o.Method
}
