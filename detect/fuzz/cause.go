package fuzz

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// One finding per cause: cases of different families that end the same way for the same
// reason (a server that exits on any line that is not JSON, a handler whose panic message is
// the same, a server that answers under another id) are one finding, whose Count says how many
// cases showed it.

// errorLine matches the line of a crash report that names the error: a Node or Python
// exception ("TypeError: …", "json.decoder.JSONDecodeError: …").
var errorLine = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*(Error|Exception)\b:?`)

// crashHeadline returns the line of stderr that says what went wrong, normalised (see
// normalizeCause): a Go panic or fatal error, a Rust panic, else the last line naming an error
// or exception, else the first line; "" when stderr is empty.
func crashHeadline(stderr string) string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return ""
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "panic: ") || strings.HasPrefix(l, "fatal error: ") || strings.Contains(l, "panicked at") {
			return normalizeCause(l)
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if errorLine.MatchString(lines[i]) {
			return normalizeCause(lines[i])
		}
	}
	return normalizeCause(lines[0])
}

var (
	quoted  = regexp.MustCompile(`'[^']*'|"[^"]*"|` + "`[^`]*`")
	hexes   = regexp.MustCompile(`0x[0-9a-fA-F]+`)
	numbers = regexp.MustCompile(`[0-9]+`)
)

// normalizeCause blanks what varies with the input in an error message: quoted text, numbers
// and addresses ("invalid character 'x' at offset 12" and "invalid character '}' at offset 3"
// are one cause), and keeps at most 160 bytes.
func normalizeCause(s string) string {
	s = quoted.ReplaceAllString(s, "'…'")
	s = hexes.ReplaceAllString(s, "0x…")
	s = numbers.ReplaceAllString(s, "0")
	if len(s) > 160 {
		s = s[:160]
	}
	return s
}

// causeTarget is what a case addressed, for causes that cannot be told apart without it.
func causeTarget(res *CaseResult) string {
	if res.Case.Tool != "" {
		return "tool " + res.Case.Tool
	}
	if len(res.Sent) > 0 {
		return methodOf(res.Sent[0])
	}
	return ""
}

// minAfterCalls is the least number of cases a session must have carried before its death
// can be blamed on the count rather than on a case.
const minAfterCalls = 3

// crashAt is one crash the run saw, with what its session had carried.
type crashAt struct {
	finding *Finding
	count   sessionCount
}

// afterCalls looks for crashes that come after a number of calls whatever the input: crash
// findings that did not show again on their own case (nor on the cases before it), whose
// sessions died with the same count (cases, tools/calls or frames) at least twice. They become
// one finding that says so, instead of blaming the cases that happened to run last.
func (r *Report) afterCalls() {
	type pattern struct {
		what string
		n    int
	}
	counts := map[pattern][]*crashAt{}
	for i := range r.crashes {
		c := &r.crashes[i]
		if !c.finding.Unconfirmed || c.count.Cases < minAfterCalls {
			continue
		}
		for _, p := range []pattern{{"cases", c.count.Cases}, {"tools/calls", c.count.Calls}, {"frames", c.count.Frames}} {
			if p.n >= minAfterCalls {
				counts[p] = append(counts[p], c)
			}
		}
	}
	var best pattern
	for p, cs := range counts {
		if len(cs) > len(counts[best]) || (len(cs) == len(counts[best]) && p.what < best.what) {
			best = p
		}
	}
	seen := counts[best]
	if len(seen) < 2 {
		return
	}
	var merged []*Finding
	total := 0
	for _, c := range seen {
		if !slices.Contains(merged, c.finding) {
			merged = append(merged, c.finding)
			total += c.finding.Count
		}
	}
	first := merged[0]
	f := &Finding{
		Outcome: Crash, Family: first.Family, Kind: "after-calls", Case: first.Case, Count: total,
		What:   fmt.Sprintf("any input: the server dies once a session has carried %d %s", best.n, best.what),
		Stderr: first.Stderr, took: first.took, AfterCalls: best.n,
		Detail: fmt.Sprintf("%d sessions died when they had carried %d %s, each during a different case, and none of those cases crashed the server again on a fresh session: "+
			"the crash comes with the number of calls, not with what was sent (first seen: %s)", len(seen), best.n, best.what, first.Detail),
	}
	f.key = "crash\x00after-calls"
	r.Unconfirmed = slices.DeleteFunc(r.Unconfirmed, func(g *Finding) bool { return slices.Contains(merged, g) })
	r.Findings = append(r.Findings, f)
	r.renumberAll()
}

// renumberAll numbers the findings (F1 …) and the unconfirmed ones (U1 …) again.
func (r *Report) renumberAll() {
	for i, f := range r.Findings {
		f.renumber(fmt.Sprintf("F%d", i+1))
	}
	for i, f := range r.Unconfirmed {
		f.renumber(fmt.Sprintf("U%d", i+1))
	}
}
