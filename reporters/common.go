package reporters

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/internal/stats"
	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
)

// item is one test with the collection it belongs to and its 1-based position in the run.
type item struct {
	N   int
	Col *result.Collection
	T   *result.Test
}

// items flattens a run in recorded order. Nil collections and tests are skipped.
func items(run *result.Run) []item {
	var out []item
	for _, c := range run.Collections {
		if c == nil {
			continue
		}
		for _, t := range c.Tests {
			if t == nil {
				continue
			}
			out = append(out, item{N: len(out) + 1, Col: c, T: t})
		}
	}
	return out
}

// problems returns the failed and errored tests, in recorded order.
func problems(run *result.Run) []item {
	var out []item
	for _, it := range items(run) {
		if it.T.Status == result.Failed || it.T.Status == result.Errored {
			out = append(out, it)
		}
	}
	return out
}

// fullName is "collection › test", the name every reporter shows.
func fullName(c *result.Collection, t *result.Test) string {
	if c == nil || c.Name == "" {
		return t.Name
	}
	return c.Name + " › " + t.Name
}

// excerpt cuts s to at most limit bytes on a UTF-8 boundary and says how much was cut.
func excerpt(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

// oneLine flattens whitespace runs containing newlines to single spaces.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n\t") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// seconds renders d in seconds with millisecond precision, as JUnit wants.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}

// percentile is the module's nearest-rank percentile (0 < p ≤ 100) of ds; 0 when ds is empty.
func percentile(ds []time.Duration, p float64) time.Duration { return stats.Percentile(ds, p) }

// latencies returns the latency of every test that ran (not skipped) and has one.
func latencies(run *result.Run) []time.Duration {
	var ds []time.Duration
	for _, it := range items(run) {
		if it.T.Status != result.Skipped && it.T.Latency > 0 {
			ds = append(ds, it.T.Latency)
		}
	}
	return ds
}

// slowest returns up to n tests that ran, by latency descending (ties keep run order).
func slowest(run *result.Run, n int) []item {
	var out []item
	for _, it := range items(run) {
		if it.T.Status != result.Skipped && it.T.Latency > 0 {
			out = append(out, it)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].T.Latency > out[j].T.Latency })
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// passRate is the share of tests that ran (not skipped) which passed, in percent.
func passRate(c result.Counts) float64 {
	ran := c.Total - c.Skipped
	if ran == 0 {
		return 0
	}
	return float64(c.Passed) * 100 / float64(ran)
}

// fmtRate renders a pass rate with one decimal, or "n/a" when nothing ran.
func fmtRate(c result.Counts) string {
	if c.Total-c.Skipped == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(passRate(c), 'f', 1, 64) + "%"
}

// retried reports whether a test needed more than one attempt.
func retried(t *result.Test) bool { return len(t.Attempts) > 1 }

// flaky reports whether a test passed only after a failed or errored attempt.
func flaky(t *result.Test) bool {
	return t.Status == result.Passed && retried(t)
}

// attemptLine summarises the attempts: "3 attempts: failed, error, passed".
func attemptLine(t *result.Test) string {
	if len(t.Attempts) == 0 {
		return ""
	}
	parts := make([]string, len(t.Attempts))
	for i, a := range t.Attempts {
		parts[i] = string(a.Status)
		if a.Error != nil && a.Error.Category != "" {
			parts[i] += " (" + string(a.Error.Category) + ")"
		}
	}
	word := "attempts"
	if len(t.Attempts) == 1 {
		word = "attempt"
	}
	return fmt.Sprintf("%d %s: %s", len(t.Attempts), word, strings.Join(parts, ", "))
}

// location is "file:line" of an assertion, or the collection file alone.
func location(c *result.Collection, f *result.Failure) string {
	file := ""
	if c != nil {
		file = c.File
	}
	if f != nil && f.Line > 0 {
		if file == "" {
			return "line " + strconv.Itoa(f.Line)
		}
		return file + ":" + strconv.Itoa(f.Line)
	}
	return file
}

// categoryHints are the default hints per fault category, used when the runner gave none.
func categoryHints() map[result.Category]string {
	return map[result.Category]string{
		result.Hang:          "the server answered, but only after the hang threshold; look for contention or a slow dependency",
		result.Deadlock:      "the request was accepted and never answered; look for a lock or a blocking call in the handler (e.g. lazy initialisation on first call)",
		result.Timeout:       "no response before the client deadline; raise the test timeout if the work is legitimately slow",
		result.ServerError:   "the server returned a JSON-RPC error of its own (code -32000..-32099); check the server log",
		result.ProtocolError: "the server rejected the request as invalid JSON-RPC or invalid params (-32600..-32603); check the tool's input schema",
		result.Crash:         "the server process exited during the call; its stderr excerpt usually names the cause",
		result.Malformed:     "the server sent bytes that are not a valid JSON-RPC message; check for logging on stdout",
		result.Disconnected:  "the connection closed mid-call; check the server's lifetime and any proxy in between",
		result.Cancelled:     "the request was cancelled by the client before it completed (interrupt or run deadline)",
	}
}

// hint returns the runner's hint or the default one for the category.
func hint(e *result.Error) string {
	if e == nil {
		return ""
	}
	if e.Hint != "" {
		return e.Hint
	}
	return categoryHints()[e.Category]
}

// interpret derives the "what this means" sentences from a run: data turned into information.
func interpret(run *result.Run) []string {
	c := run.Counts()
	var out []string
	ran := c.Total - c.Skipped
	switch {
	case c.Total == 0:
		return []string{"No tests were recorded, so this run says nothing about the server yet."}
	case ran == 0:
		out = append(out, "Every test was skipped, so this run says nothing about the server yet.")
	case c.Failed == 0 && c.Errored == 0:
		out = append(out, fmt.Sprintf("All %s that ran passed: the server behaved as the collection expects.", textfmt.Plural(ran, "test")))
	default:
		s := fmt.Sprintf("%d of %s that ran did not pass.", c.Failed+c.Errored, textfmt.Plural(ran, "test"))
		if audits := failedAudits(run); audits > 0 {
			s += fmt.Sprintf(" %s at or above the audit's --fail-on severity.", textfmt.Plural(audits, "security finding"))
			if c.Failed > audits {
				s += fmt.Sprintf(" %s: the server answered, but not as expected.", failedPhrase(c.Failed-audits))
			}
		} else if c.Failed > 0 {
			s += fmt.Sprintf(" %s: the server answered, but not as expected.", failedPhrase(c.Failed))
		}
		if c.Errored > 0 {
			s += fmt.Sprintf(" %s: %s.", erroredPhrase(c.Errored), categoryPhrase(run))
		}
		out = append(out, s)
	}
	var fl []string
	for _, it := range items(run) {
		if flaky(it.T) {
			fl = append(fl, it.T.Name)
		}
	}
	if len(fl) > 0 {
		out = append(out, fmt.Sprintf("%s passed only after a retry (%s): treat as flaky; the retry hides an intermittent failure.", textfmt.Plural(len(fl), "test"), strings.Join(fl, ", ")))
	}
	if s := findingsNote(run); s != "" {
		out = append(out, s)
	}
	if run.BailedAfter != "" {
		out = append(out, fmt.Sprintf("The run stopped after %q did not pass (--bail); skipped tests were not judged.", run.BailedAfter))
	} else if run.Interrupted {
		out = append(out, "The run was interrupted before every test ran; skipped tests were not judged.")
	} else if c.Skipped > 0 && ran > 0 {
		verb := "were"
		if c.Skipped == 1 {
			verb = "was"
		}
		out = append(out, fmt.Sprintf("%s %s skipped (filtered out, a dependency did not pass, or their server could not be reached).", textfmt.Plural(c.Skipped, "test"), verb))
	}
	ds := latencies(run)
	if len(ds) >= 2 {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		top := slowest(run, 1)[0]
		share := float64(top.T.Latency) * 100 / float64(sum)
		if len(ds) >= 4 && share >= 40 {
			out = append(out, fmt.Sprintf("The slowest server response, to %s, took %s — %.0f%% of all response latency; look there first for speed.", top.T.Name, textfmt.Duration(top.T.Latency), share))
		} else {
			out = append(out, fmt.Sprintf("No single response dominates latency: p50 %s, p95 %s, slowest %s (%s).", textfmt.Duration(percentile(ds, 50)), textfmt.Duration(percentile(ds, 95)), top.T.Name, textfmt.Duration(top.T.Latency)))
		}
	}
	return out
}

// findingsNote is the "what this means" sentence about the run's findings, or "".
func findingsNote(run *result.Run) string {
	n := run.Findings()
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("The servers sent %s that answered no request (a second answer, an id never issued, a frame nobody waited for): "+
		"a bug in the server even where the tests passed; --strict fails the tests they came with.", textfmt.Plural(n, "message"))
}

// findingText is a finding on one line: "ProtocolError: response for id 3, which is not pending".
func findingText(f result.Finding) string {
	return strings.TrimSpace(string(f.Category) + ": " + f.Message)
}

// stray is a finding with the test it came with (nil: the collection's, after the last test).
type stray struct {
	Col *result.Collection
	T   *result.Test
	F   result.Finding
}

// strays lists the findings of the tests that passed or were skipped, then those of the
// collections, in recorded order: the ones no failure digest shows.
func strays(run *result.Run) []stray {
	var out []stray
	for _, c := range run.Collections {
		if c == nil {
			continue
		}
		for _, t := range c.Tests {
			if t == nil || t.Status == result.Failed || t.Status == result.Errored {
				continue
			}
			for _, f := range t.Findings {
				out = append(out, stray{Col: c, T: t, F: f})
			}
		}
		for _, f := range c.Findings {
			out = append(out, stray{Col: c, F: f})
		}
	}
	return out
}

// strayWhere names where a finding came: "collection › test", or the collection and server.
func strayWhere(s stray) string {
	if s.T != nil {
		return fullName(s.Col, s.T)
	}
	where := s.Col.Name + " (after its last test"
	if s.F.Server != "" {
		where += " on server " + s.F.Server
	}
	return where + ")"
}

// failedAudits counts the failed tests that are audit findings (kind "audit"): a finding is
// not a failed assertion.
func failedAudits(run *result.Run) int {
	n := 0
	for _, it := range items(run) {
		if it.T.Kind == "audit" && it.T.Status == result.Failed {
			n++
		}
	}
	return n
}

func failedPhrase(n int) string {
	if n == 1 {
		return "1 failed an assertion"
	}
	return strconv.Itoa(n) + " failed assertions"
}

func erroredPhrase(n int) string {
	if n == 1 {
		return "1 could not be carried out"
	}
	return strconv.Itoa(n) + " could not be carried out"
}

// categoryPhrase lists the error categories with counts, most frequent first then by name.
func categoryPhrase(run *result.Run) string {
	n := map[string]int{}
	for _, it := range problems(run) {
		if it.T.Status == result.Errored {
			cat := "unclassified"
			if it.T.Error != nil && it.T.Error.Category != "" {
				cat = string(it.T.Error.Category)
			}
			n[cat]++
		}
	}
	cats := make([]string, 0, len(n))
	for k := range n {
		cats = append(cats, k)
	}
	sort.Slice(cats, func(i, j int) bool {
		if n[cats[i]] != n[cats[j]] {
			return n[cats[i]] > n[cats[j]]
		}
		return cats[i] < cats[j]
	})
	parts := make([]string, len(cats))
	for i, c := range cats {
		parts[i] = fmt.Sprintf("%s ×%d", c, n[c])
	}
	return strings.Join(parts, ", ")
}

// statusWord is the verdict of a run: PASS, FAIL or INTERRUPTED.
func statusWord(run *result.Run) string {
	switch {
	case !run.OK():
		return "FAIL"
	case run.Interrupted:
		return "INTERRUPTED"
	default:
		return "PASS"
	}
}

// title is the report title.
func title(o Options, run *result.Run) string {
	if o.Title != "" {
		return o.Title
	}
	if run.ID == "" {
		return "mcpspec run"
	}
	return "mcpspec run " + run.ID
}

// fmtTime renders a timestamp in UTC, or "" for the zero time.
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// clean makes untrusted text safe to print ([textfmt.Clean]).
func clean(s string) string { return textfmt.Clean(s) }
