package race

import (
	"fmt"
	"io"
	"strings"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
)

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	name := r.Server.Name
	if name == "" {
		name = "the server"
	}
	fmt.Fprintf(&b, "Race check of %s on %s %s: %s of %d identical concurrent calls, %s one at a time\n",
		r.Tool, name, r.Server.Version, textfmt.Plural(r.Rounds, "round"), r.Concurrency, textfmt.Plural(r.SequentialCalls, "call"))
	fmt.Fprintf(&b, "Arguments (%s): %s\n\n", r.ArgsFrom, compact(r.Args))
	fmt.Fprintf(&b, "Verdict: %s\n  %s\n", strings.ToUpper(string(r.Verdict)), r.Diagnosis)
	if len(r.VolatilePaths) > 0 {
		fmt.Fprintf(&b, "\nVaries one call at a time (excused): %s\n", pathList(r.VolatilePaths))
	}
	shown := 0
	for _, g := range r.Groups {
		if !g.Divergent {
			continue
		}
		if shown == 0 {
			fmt.Fprintf(&b, "\nReference (the answer of calls made one at a time):\n  %s\n", cut(r.Reference, 400))
		}
		if shown == 3 {
			b.WriteString("\n  … more divergent answers in --json\n")
			break
		}
		shown++
		fmt.Fprintf(&b, "\nDivergent answer (%s):\n%s\n", textfmt.Plural(g.Count, "call"), indent(g.Diff, "  "))
	}
	if ct := r.CrossTalk; ct != nil {
		fmt.Fprintf(&b, "\nCross-talk (%s): %s — %s\n", orDash(strings.Join(ct.Fields, ", ")), strings.ToUpper(string(ct.Verdict)), ct.Reason)
		for i, l := range ct.Leaks {
			if i == 3 {
				fmt.Fprintf(&b, "  … %d more in --json\n", len(ct.Leaks)-3)
				break
			}
			fmt.Fprintf(&b, "  call %d carries the marker of call %s: %s\n", l.Call, ints(l.Carries), l.Excerpt)
		}
	}
	if lu := r.LostUpdates; lu != nil {
		how := ""
		if lu.Picked != "" {
			how = "; " + lu.Picked
		}
		fmt.Fprintf(&b, "\nLost updates (%s, read back with %s%s): %s — %s\n", orDash(strings.Join(lu.Fields, ", ")), lu.ReadBack, how, strings.ToUpper(string(lu.Verdict)), lu.Reason)
		for i, m := range lu.Lost {
			if i == 5 {
				fmt.Fprintf(&b, "  … %d more in --json\n", len(lu.Lost)-5)
				break
			}
			fmt.Fprintf(&b, "  lost: call %d's marker %s\n", m.Call, m.Marker)
		}
	}
	for _, n := range r.NoAnswer {
		fmt.Fprintf(&b, "\nNo answer (%s): %d concurrent, %d one at a time — %s\n", n.Class, n.Concurrent, n.Alone, orDash(n.Message))
	}
	if r.Incomplete != "" {
		fmt.Fprintf(&b, "\nIncomplete: %s\n", r.Incomplete)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Tests returns the report as test cases: the identical-call check and the cross-talk form,
// a race being a failed case whose failure carries the evidence.
func (r *Report) Tests() []*result.Test {
	var out []*result.Test
	t := &result.Test{ID: "race/" + r.Tool, Name: fmt.Sprintf("race: %s ×%d", r.Tool, r.Concurrency), Kind: "race", Target: r.Tool,
		Status: result.Passed, Duration: r.Duration, Response: r.Diagnosis}
	div := false
	for _, g := range r.Groups {
		if g.Divergent {
			div = true
			t.Failures = append(t.Failures, result.Failure{Assertion: "race", Path: strings.Join(g.Paths, ", "),
				Expected: cut(r.Reference, 500), Actual: cut(g.Canonical, 500),
				Message: fmt.Sprintf("%s answered differently from calls made one at a time:\n%s", textfmt.Plural(g.Count, "concurrent call"), g.Diff)})
		}
	}
	if n := r.unanswered(); n != nil && !div && r.Found() {
		t.Failures = append(t.Failures, result.Failure{Assertion: string(n.Class), Expected: "an answer to every call",
			Actual: fmt.Sprintf("%d concurrent and %d sequential calls got none (%s)", n.Concurrent, n.Alone, n.Category), Message: r.Diagnosis})
	}
	switch {
	case div || r.Found() && r.Verdict != VerdictRace:
		t.Status = result.Failed
	case r.Verdict == VerdictNoAnswer:
		t.Status = result.Errored
		t.Error = &result.Error{Category: result.Timeout, Message: r.Diagnosis}
	case r.Verdict == VerdictIncomplete:
		t.Status = result.Errored
		t.Error = &result.Error{Category: result.Cancelled, Message: r.Diagnosis}
	}
	t.Attempts = []result.Attempt{{Status: t.Status, Failures: t.Failures, Error: t.Error}}
	out = append(out, t)
	if ct := r.CrossTalk; ct != nil {
		c := &result.Test{ID: "race/" + r.Tool + "/cross-talk", Name: fmt.Sprintf("race: %s cross-talk", r.Tool), Kind: "race", Target: r.Tool,
			Status: result.Passed, Response: ct.Reason}
		switch ct.Verdict {
		case CrossTalkLeak:
			c.Status = result.Failed
			for _, l := range ct.Leaks {
				c.Failures = append(c.Failures, result.Failure{Assertion: "cross-talk", Path: strings.Join(ct.Fields, ", "),
					Expected: fmt.Sprintf("call %d's answer carries only its own marker", l.Call),
					Actual:   fmt.Sprintf("it carries the marker of call %s: %s", ints(l.Carries), l.Excerpt), Message: ct.Reason})
				if len(c.Failures) == 5 {
					break
				}
			}
		case CrossTalkSkipped:
			c.Status, c.SkipReason = result.Skipped, ct.Reason
		}
		c.Attempts = []result.Attempt{{Status: c.Status, Failures: c.Failures}}
		if c.Status == result.Skipped {
			c.Attempts = []result.Attempt{}
		}
		out = append(out, c)
	}
	if lu := r.LostUpdates; lu != nil {
		c := &result.Test{ID: "race/" + r.Tool + "/lost-updates", Name: fmt.Sprintf("race: %s lost updates (read back with %s)", r.Tool, lu.ReadBack), Kind: "race", Target: r.Tool,
			Status: result.Passed, Response: lu.Reason}
		switch lu.Verdict {
		case LostUpdateRace:
			c.Status = result.Failed
			for _, m := range lu.Lost {
				c.Failures = append(c.Failures, result.Failure{Assertion: "lost-update", Path: strings.Join(lu.Fields, ", "),
					Expected: fmt.Sprintf("%s shows call %d's marker %s (its write reported success)", lu.ReadBack, m.Call, m.Marker),
					Actual:   "it is missing", Message: lu.Reason})
				if len(c.Failures) == 5 {
					break
				}
			}
		case LostUpdateSkipped:
			c.Status, c.SkipReason = result.Skipped, lu.Reason
		}
		c.Attempts = []result.Attempt{{Status: c.Status, Failures: c.Failures}}
		if c.Status == result.Skipped {
			c.Attempts = []result.Attempt{}
		}
		out = append(out, c)
	}
	return out
}

func compact(v any) string {
	b, err := jsonMarshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return cut(string(b), 300)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func indent(s, pre string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
