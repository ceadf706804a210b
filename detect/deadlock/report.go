package deadlock

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/session"
)

// The detector keeps the contract of package detect.
var (
	_ detect.Report                    = (*Report)(nil)
	_ detect.RunFunc[Options, *Report] = Run
)

// Report is what a probe found. Its JSON form is the `--json` output of `mcpspec deadlock`.
type Report struct {
	Server          session.Implementation `json:"serverInfo"`
	ProtocolVersion string                 `json:"protocolVersion,omitempty"`
	Concurrency     int                    `json:"concurrency"`
	HangAfterMs     int64                  `json:"hangAfterMs"`
	GraceMs         int64                  `json:"graceMs"`
	// Verdict is VerdictDeadlock, VerdictLost, VerdictCrash, VerdictHang, VerdictSlow,
	// VerdictClean, VerdictNotTested or VerdictIncomplete.
	Verdict Verdict `json:"verdict"`
	// DeadlockCount counts calls never answered; HangCount calls that passed the hang
	// threshold (slow or deadlocked); SlowCount those answered late (or queued).
	DeadlockCount int `json:"deadlock_count"`
	HangCount     int `json:"hang_count"`
	SlowCount     int `json:"slow_count"`
	OKCount       int `json:"ok_count"`
	CrashCount    int `json:"crash_count"`
	// LostCount counts calls whose response stream ended before the answer (lost responses).
	LostCount   int `json:"lost_count"`
	FailedCount int `json:"failed_count"`
	// Probes holds one probe per tool, then the tools/list race.
	Probes  []Probe          `json:"probes"`
	Skipped []detect.Skipped `json:"skipped,omitempty"`
	// Incomplete says why the probe stopped before the end, if it did.
	Incomplete string        `json:"incomplete,omitempty"`
	Notes      []string      `json:"notes,omitempty"`
	Duration   time.Duration `json:"-"`
}

// Probe is one tool's probe (or the tools/list race).
type Probe struct {
	Name   string `json:"name"`
	Method string `json:"method"`
	Tool   string `json:"tool,omitempty"`
	// Args are the arguments sent; ArgsFrom is "given" or "inputSchema" (made up from it).
	Args     map[string]any `json:"args,omitempty"`
	ArgsFrom string         `json:"argsFrom,omitempty"`
	// Sequential are the control calls, one after another; Concurrent the calls released
	// together.
	Sequential []detect.Outcome `json:"sequential,omitempty"`
	Concurrent []detect.Outcome `json:"concurrent"`
	Verdict    Verdict          `json:"verdict"`
	Diagnosis  string           `json:"diagnosis"`
	// AfterDeadlock says whether the session still answered ping once calls had deadlocked;
	// Wedged is set when it did not.
	AfterDeadlock string `json:"afterDeadlock,omitempty"`
	Wedged        bool   `json:"wedged,omitempty"`
}

// Found reports whether the probe found a bug: a deadlock or a crash.
func (r *Report) Found() bool {
	return r.Verdict == VerdictDeadlock || r.Verdict == VerdictCrash || r.Verdict == VerdictLost
}

// Findings returns the probes that found a bug.
func (r *Report) Findings() []Probe {
	var out []Probe
	for _, p := range r.Probes {
		if p.Verdict == VerdictDeadlock || p.Verdict == VerdictCrash || p.Verdict == VerdictLost {
			out = append(out, p)
		}
	}
	return out
}

// judge sets the probe's verdict and diagnosis from its sequential and concurrent calls.
func (p *prober) judge(ctx context.Context, c *conn, pr *Probe) {
	seq, con := detect.Count(pr.Sequential), detect.Count(pr.Concurrent)
	n := len(pr.Concurrent)
	if pr.Tool != "" && (seq.Slow > 0 || seq.Deadlock > 0 && !p.shared) {
		p.slowAlone[pr.Tool] = true
	}
	alone := p.aloneSummary(pr)
	under := fmt.Sprintf("under %d concurrent calls", n)
	if pr.Sequential == nil {
		under = fmt.Sprintf("when %d tools/calls race tools/list right after the handshake", n-1)
	}
	switch {
	case seq.Deadlock > 0:
		// Unanswered alone: whatever the concurrent calls did, concurrency is not the cause.
		pr.Verdict = VerdictHang
		pr.Diagnosis = fmt.Sprintf("not answered even when called alone (no answer within %s + %s grace): a hang, or a tool slower than that — not a deadlock, which needs concurrency; raise --hang-after above the tool's time alone to tell", p.o.HangAfter, p.o.Grace)
		if con.Deadlock > 0 {
			pr.Diagnosis += fmt.Sprintf(" (%d of %d concurrent calls unanswered too)", con.Deadlock, n)
			pr.AfterDeadlock, pr.Wedged = p.ping(ctx, c)
			c.broken = true
		} else {
			pr.Diagnosis += fmt.Sprintf(" (%d concurrent calls on a fresh session were answered)", n)
		}
	case con.Deadlock > 0 && seq.Slow > 0:
		// Slow alone: calls that are slower still under concurrency look stuck to a hang
		// threshold below the tool's own time.
		pr.Verdict = VerdictHang
		pr.Diagnosis = fmt.Sprintf("slow alone (%s, past --hang-after %s), and %d of %d unanswered within %s + %s grace %s: a slow tool made slower by concurrency, or a deadlock; raise --hang-after above the tool's time alone to tell",
			alone, p.o.HangAfter, con.Deadlock, n, p.o.HangAfter, p.o.Grace, under)
		pr.AfterDeadlock, pr.Wedged = p.ping(ctx, c)
		c.broken = true
	case con.Deadlock > 0:
		pr.Verdict = VerdictDeadlock
		stuck := fmt.Sprintf("%d of %d never answered", con.Deadlock, n)
		if pr.Sequential == nil {
			pr.Diagnosis = fmt.Sprintf("deadlocks %s (%s; %s)", under, stuck, names(pr.Concurrent, detect.Deadlock))
		} else {
			pr.Diagnosis = fmt.Sprintf("passes sequentially (%s), deadlocks %s (%s)", alone, under, stuck)
		}
		pr.AfterDeadlock, pr.Wedged = p.ping(ctx, c)
		c.broken = true
	case con.Lost > 0 || seq.Lost > 0:
		pr.Verdict = VerdictLost
		pr.Diagnosis = fmt.Sprintf("lost response: the server ended the response stream before the answer, with nothing to resume it from (no event id), on %d of %d calls alone and %d of %d together; the session went on answering",
			seq.Lost, len(pr.Sequential), con.Lost, n)
	case con.Crash > 0 || seq.Crash > 0:
		pr.Verdict = VerdictCrash
		if seq.Crash > 0 {
			pr.Diagnosis = "the server went away on a single call: " + first(pr.Sequential, detect.Crash)
		} else {
			pr.Diagnosis = fmt.Sprintf("passes sequentially (%s), the server went away %s (%d of %d calls): %s", alone, under, con.Crash, n, first(pr.Concurrent, detect.Crash))
		}
	case con.Slow > 0 && seq.Slow > 0:
		pr.Verdict = VerdictOK
		pr.Diagnosis = fmt.Sprintf("slow alone (%s) and slow %s (%d of %d answered late), never stuck", alone, under, con.Slow, n)
	case con.Slow*2 > n:
		pr.Verdict = VerdictSlow
		pr.Diagnosis = fmt.Sprintf("concurrency degrades latency: %d of %d calls slow (answered after %s, or queued behind the others) %s, none alone (%s)", con.Slow, n, p.o.HangAfter, under, alone)
	default:
		pr.Verdict = VerdictOK
		pr.Diagnosis = fmt.Sprintf("%d of %d answered %s (slowest %s)", con.OK+con.Slow, n, under, round(detect.MaxLatency(pr.Concurrent)))
		if con.Slow > 0 {
			pr.Diagnosis += fmt.Sprintf(", %d after the hang threshold", con.Slow)
		}
	}
	if con.Failed > 0 && pr.Verdict != VerdictDeadlock && pr.Verdict != VerdictHang {
		pr.Diagnosis += fmt.Sprintf("; %d failed otherwise (%s)", con.Failed, first(pr.Concurrent, detect.Failed))
	}
	if ctx.Err() != nil && pr.Verdict == VerdictOK {
		pr.Verdict, pr.Diagnosis = VerdictIncomplete, "stopped: "+context.Cause(ctx).Error()
	}
}

// rejudgeListRace makes a deadlock of the list race a hang when every call stuck in it is of
// a tool that was slow or unanswered alone: a deadlock needs calls answered alone.
func (p *prober) rejudgeListRace(pr *Probe) {
	if pr.Sequential != nil || pr.Verdict != VerdictDeadlock {
		return
	}
	var stuck []string
	for _, o := range pr.Concurrent {
		if o.Class != detect.Deadlock {
			continue
		}
		if o.Tool == "" || !p.slowAlone[o.Tool] {
			return
		}
		if !slices.Contains(stuck, o.Tool) {
			stuck = append(stuck, o.Tool)
		}
	}
	pr.Verdict = VerdictHang
	pr.Diagnosis = fmt.Sprintf("calls unanswered when tools/calls race tools/list right after the handshake, all of tools slow or unanswered even alone (%s): a hang or a slow tool, not a deadlock", strings.Join(stuck, ", "))
}

// aloneSummary describes the control run: "3 of 3 answered, slowest 2ms".
func (p *prober) aloneSummary(pr *Probe) string {
	seq := detect.Count(pr.Sequential)
	return fmt.Sprintf("%d of %d answered, slowest %s", seq.OK+seq.Slow, len(pr.Sequential), round(detect.MaxLatency(pr.Sequential)))
}

// ping asks a session whose calls deadlocked whether it still answers anything; wedged is
// set when it does not.
func (p *prober) ping(ctx context.Context, c *conn) (what string, wedged bool) {
	pctx, cancel := context.WithTimeout(ctx, min(p.o.HangAfter, 5*time.Second))
	defer cancel()
	start := time.Now()
	if err := c.c.Ping(pctx); err != nil {
		return "ping unanswered too: the whole session is wedged (" + string(session.CategoryOf(err)) + ")", true
	}
	return "ping answered in " + round(time.Since(start)).String() + ": only the tool calls are stuck", false
}

// stopped marks the report incomplete and the tools not probed.
func (r *Report) stopped(ctx context.Context, rest []session.Tool) {
	r.Incomplete = "stopped before the end: " + context.Cause(ctx).Error()
	for _, t := range rest {
		r.Skipped = append(r.Skipped, detect.Skipped{Tool: t.Name, Reason: "not probed: the probe was stopped"})
	}
}

// tally counts every call and sets the verdict.
func (r *Report) tally() {
	r.DeadlockCount, r.SlowCount, r.OKCount, r.CrashCount, r.LostCount, r.FailedCount = 0, 0, 0, 0, 0, 0
	verdict := VerdictClean
	for _, p := range r.Probes {
		for _, group := range [][]detect.Outcome{p.Sequential, p.Concurrent} {
			c := detect.Count(group)
			r.DeadlockCount += c.Deadlock
			r.SlowCount += c.Slow
			r.OKCount += c.OK
			r.CrashCount += c.Crash
			r.LostCount += c.Lost
			r.FailedCount += c.Failed
		}
		switch {
		case p.Verdict == VerdictDeadlock:
			verdict = VerdictDeadlock
		case p.Verdict == VerdictLost && verdict != VerdictDeadlock:
			verdict = VerdictLost
		case p.Verdict == VerdictCrash && verdict != VerdictDeadlock && verdict != VerdictLost:
			verdict = VerdictCrash
		case p.Verdict == VerdictHang && (verdict == VerdictClean || verdict == VerdictSlow):
			verdict = VerdictHang
		case p.Verdict == VerdictSlow && verdict == VerdictClean:
			verdict = VerdictSlow
		}
	}
	r.HangCount = r.DeadlockCount + r.SlowCount
	if verdict == VerdictClean && r.Incomplete != "" {
		verdict = VerdictIncomplete
	}
	if r.Verdict == VerdictNotTested {
		return
	}
	r.Verdict = verdict
}

// notTested marks a report whose probe called no tool, and says how to opt in.
func (r *Report) notTested(listed int) {
	r.Verdict = VerdictNotTested
	if listed == 0 {
		r.Notes = append(r.Notes, "the server lists no tools: nothing was called, so nothing was tested")
		return
	}
	var destructive, openWorld, byName int
	for _, s := range r.Skipped {
		switch {
		case strings.Contains(s.Reason, "destructiveHint"):
			destructive++
		case strings.Contains(s.Reason, "openWorldHint"):
			openWorld++
		default:
			byName++
		}
	}
	var how []string
	if destructive > 0 {
		how = append(how, fmt.Sprintf("%d annotated destructiveHint: --include-destructive (against a disposable server state)", destructive))
	}
	if openWorld > 0 {
		how = append(how, fmt.Sprintf("%d annotated openWorldHint: --include-open-world", openWorld))
	}
	if byName > 0 {
		how = append(how, fmt.Sprintf("%d left out by --skip-tool", byName))
	}
	r.Notes = append(r.Notes, fmt.Sprintf("every one of the %d tools was left out, so nothing was called and nothing was tested; to opt in: %s, or name one with --tool",
		listed, strings.Join(how, "; ")))
}

// names lists the distinct methods/tools of the calls of class c: "tools/list, echo".
func names(group []detect.Outcome, c detect.Class) string {
	seen := map[string]bool{}
	var out []string
	for _, o := range group {
		if o.Class != c {
			continue
		}
		n := o.Tool
		if n == "" {
			n = o.Method
		}
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return "stuck: " + strings.Join(out, ", ")
}

// first returns the message of the first call of class c.
func first(group []detect.Outcome, c detect.Class) string {
	for _, o := range group {
		if o.Class == c {
			return o.Message
		}
	}
	return ""
}

// round rounds d for display.
func round(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
