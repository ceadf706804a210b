package headofline

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/detect"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/session"
)

// The detector keeps the contract of package detect.
var (
	_ detect.Report                    = (*Report)(nil)
	_ detect.RunFunc[Options, *Report] = Run
)

// Report is what a check found. Its JSON form is the `--json` output of `mcpspec head-of-line`.
type Report struct {
	Server          session.Implementation `json:"serverInfo"`
	ProtocolVersion string                 `json:"protocolVersion,omitempty"`
	SlowTool        string                 `json:"slowTool"`
	SlowArgs        map[string]any         `json:"slowArgs"`
	FastTool        string                 `json:"fastTool"`
	FastArgs        map[string]any         `json:"fastArgs"`
	Threshold       float64                `json:"threshold"`
	// FastAloneMs is the fast call's p50 alone; SlowAloneMs the slow call's.
	FastAloneMs float64 `json:"fastAloneP50Ms"`
	SlowAloneMs float64 `json:"slowAloneMs"`
	Phases      []Phase `json:"phases"`
	// Scope says whom a serializing server makes wait: ScopeServer (every session) or
	// ScopeSession (the calls of the slow call's own session); "" when not checked (a process
	// per session, or no waiting). ScopeNote says why it could not be told.
	Scope     Scope  `json:"scope,omitempty"`
	ScopeNote string `json:"scopeNote,omitempty"`
	// Verdict is VerdictSerializes, VerdictSaturates, VerdictConcurrent or VerdictInconclusive.
	Verdict   Verdict       `json:"verdict"`
	Diagnosis string        `json:"diagnosis"`
	Duration  time.Duration `json:"-"`

	fastP50, slowAlone time.Duration
}

// Scope is whom a serializing server makes wait; its JSON form is the string.
type Scope string

// Scopes of a serializing server.
const (
	// ScopeServer: a fast call on another session waited too.
	ScopeServer Scope = "server"
	// ScopeSession: a fast call on another session went past.
	ScopeSession Scope = "session"
)

// Phase is the rounds with a number of slow calls in flight.
type Phase struct {
	SlowInFlight int `json:"slowInFlight"`
	// OtherSession: the fast calls went on a second session (the cross-session phase).
	OtherSession bool    `json:"otherSession,omitempty"`
	Rounds       []Round `json:"rounds"`
	ValidRounds  int     `json:"validRounds"`
	// BlockedRounds counts the rounds whose fast call waited for the slow ones.
	BlockedRounds int `json:"blockedRounds"`
	// FastP50Ms is the fast call's p50 in the valid rounds; Inflation that over its p50 alone.
	FastP50Ms float64 `json:"fastP50Ms"`
	Inflation float64 `json:"inflation"`
	// Blocked: most valid rounds were blocked.
	Blocked bool `json:"blocked"`
}

// Round is one fast call made while slow calls were in flight.
type Round struct {
	FastMs float64 `json:"fastMs"`
	// WaitedFraction is the fast call's latency over the time until the first slow call in
	// flight ended: 1 or more when it waited for slow calls, near 0 when it went past them.
	WaitedFraction float64 `json:"waitedFraction"`
	Valid          bool    `json:"valid"`
	Blocked        bool    `json:"blocked"`
	Note           string  `json:"note,omitempty"`
}

// Found reports whether the check found head-of-line blocking.
func (r *Report) Found() bool { return r.Verdict == VerdictSerializes || r.Verdict == VerdictSaturates }

func (r *Report) inconclusive(why string) {
	r.Verdict, r.Diagnosis = VerdictInconclusive, why
}

// decide sets the verdict from the phases.
func (r *Report) decide(ctx context.Context) {
	if len(r.Phases) == 0 || r.Phases[0].ValidRounds == 0 {
		why := "no round had the fast call sent while a slow call was in flight"
		if ctx.Err() != nil {
			why = "stopped before the end: " + context.Cause(ctx).Error()
		}
		r.inconclusive(why)
		return
	}
	var same []Phase
	var other *Phase
	for i, p := range r.Phases {
		if p.OtherSession {
			other = &r.Phases[i]
		} else {
			same = append(same, p)
		}
	}
	one := same[0]
	switch {
	case one.Blocked:
		r.Verdict = VerdictSerializes
		who := "the server handles this session's calls one at a time"
		switch {
		case other != nil && other.ValidRounds > 0 && other.Blocked:
			r.Scope = ScopeServer
			who = fmt.Sprintf("a fast call on another session waited too (%d of %d rounds): the whole server handles one call at a time (a global lock, or work that blocks its event loop)", other.BlockedRounds, other.ValidRounds)
		case other != nil && other.ValidRounds > 0:
			r.Scope = ScopeSession
			who = fmt.Sprintf("a fast call on another session went past (waited in %d of %d rounds): the server runs each session's calls one at a time", other.BlockedRounds, other.ValidRounds)
		}
		r.Diagnosis = fmt.Sprintf("fast calls wait for slow ones: with one call of %s in flight, %s took %s (p50, ×%.0f its %s alone) and waited for it in %d of %d rounds: %s",
			r.SlowTool, r.FastTool, ms2d(one.FastP50Ms), one.Inflation, round(r.fastP50), one.BlockedRounds, one.ValidRounds, who)
	case len(same) > 1 && same[1].Blocked:
		p := same[1]
		r.Verdict = VerdictSaturates
		r.Diagnosis = fmt.Sprintf("fast calls get past one slow call but wait once %d are in flight: %s took %s (p50, ×%.0f its %s alone), waiting in %d of %d rounds: too few workers for the slow calls",
			p.SlowInFlight, r.FastTool, ms2d(p.FastP50Ms), p.Inflation, round(r.fastP50), p.BlockedRounds, p.ValidRounds)
	default:
		r.Verdict = VerdictConcurrent
		worst := one
		for _, p := range same {
			if p.Inflation > worst.Inflation {
				worst = p
			}
		}
		r.Diagnosis = fmt.Sprintf("fast calls go past slow ones: with %s in flight %s took %s (p50, ×%.1f its %s alone), far less than the %s the slow call takes",
			textfmt.Plural(worst.SlowInFlight, "slow call"), r.FastTool, ms2d(worst.FastP50Ms), worst.Inflation, round(r.fastP50), round(r.slowAlone))
	}
}

func ms2d(v float64) time.Duration { return round(time.Duration(v * float64(time.Millisecond))) }

// WriteText writes the report for a terminal.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	name := r.Server.Name
	if name == "" {
		name = "the server"
	}
	fmt.Fprintf(&b, "Head-of-line check of %s %s: fast %s, slow %s, threshold ×%g\n", name, r.Server.Version, r.FastTool, r.SlowTool, r.Threshold)
	if r.FastAloneMs > 0 {
		fmt.Fprintf(&b, "  %s alone: p50 %s\n", r.FastTool, ms2d(r.FastAloneMs))
	}
	if r.SlowAloneMs > 0 {
		fmt.Fprintf(&b, "  %s alone: %s\n", r.SlowTool, ms2d(r.SlowAloneMs))
	}
	for _, p := range r.Phases {
		state := "went past"
		if p.Blocked {
			state = "BLOCKED"
		}
		where := ""
		if p.OtherSession {
			where = " on another session"
		}
		fmt.Fprintf(&b, "  with %s in flight: %s%s p50 %s (×%.1f), waited in %d of %d rounds: %s\n",
			textfmt.Plural(p.SlowInFlight, "slow call"), r.FastTool, where, ms2d(p.FastP50Ms), p.Inflation, p.BlockedRounds, p.ValidRounds, state)
	}
	if r.ScopeNote != "" {
		fmt.Fprintf(&b, "  (%s)\n", r.ScopeNote)
	}
	fmt.Fprintf(&b, "\nVerdict: %s\n  %s\n", strings.ToUpper(string(r.Verdict)), r.Diagnosis)
	_, err := io.WriteString(w, b.String())
	return err
}

// Tests returns the report as one test case, failed when fast calls waited for slow ones.
func (r *Report) Tests() []*result.Test {
	t := &result.Test{ID: "head-of-line/" + r.FastTool + "/" + r.SlowTool, Name: fmt.Sprintf("head-of-line: %s behind %s", r.FastTool, r.SlowTool),
		Kind: "head-of-line", Target: r.FastTool, Status: result.Passed, Duration: r.Duration, Response: r.Diagnosis}
	if len(r.Phases) > 0 {
		t.Latency = ms2d(r.Phases[0].FastP50Ms)
	}
	switch {
	case r.Found():
		t.Status = result.Failed
		var ev []string
		for _, p := range r.Phases {
			where := ""
			if p.OtherSession {
				where = ", fast call on another session"
			}
			ev = append(ev, fmt.Sprintf("%s in flight%s: p50 %s (×%.1f), waited in %d of %d rounds", textfmt.Plural(p.SlowInFlight, "slow call"), where, ms2d(p.FastP50Ms), p.Inflation, p.BlockedRounds, p.ValidRounds))
		}
		t.Failures = []result.Failure{{Assertion: "head-of-line",
			Expected: fmt.Sprintf("%s answered beside %s (under ×%g its p50 alone, %s)", r.FastTool, r.SlowTool, r.Threshold, ms2d(r.FastAloneMs)),
			Actual:   strings.Join(ev, "; "), Message: r.Diagnosis}}
	case r.Verdict == VerdictInconclusive:
		t.Status = result.Errored
		t.Error = &result.Error{Message: "inconclusive: " + r.Diagnosis, Hint: "pick a slow call that takes at least 20ms and 10× the fast one"}
	}
	t.Attempts = []result.Attempt{{Status: t.Status, Latency: t.Latency, Failures: t.Failures, Error: t.Error}}
	return []*result.Test{t}
}
