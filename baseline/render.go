package baseline

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/internal/textfmt"
)

// WriteText renders the diff for a terminal: a verdict line, the regressions, the fixed (stale)
// tests, other changes, and what it means. Deterministic for a given Diff.
func (d *Diff) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "Compared %s with baseline %s\n", runLabel(d.Current), runLabel(d.Base))
	fmt.Fprintf(b, "%s\n", d.verdict())
	for _, sec := range d.sections() {
		if len(sec.lines) == 0 {
			continue
		}
		fmt.Fprintf(b, "\n%s\n", sec.title)
		for _, l := range sec.lines {
			fmt.Fprintf(b, "  %s %s\n", sec.mark, l.text)
			for _, sub := range l.sub {
				fmt.Fprintf(b, "      %s\n", sub)
			}
		}
	}
	fmt.Fprintf(b, "\nWhat this means:\n")
	for _, s := range d.meaning() {
		fmt.Fprintf(b, "  %s\n", s)
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write diff: %w", err)
	}
	return nil
}

// WriteMarkdown renders the diff as GitHub-flavoured markdown for a pull-request comment.
func (d *Diff) WriteMarkdown(w io.Writer) error {
	b := bufio.NewWriter(w)
	icon := "✅"
	if d.Regressed() {
		icon = "❌"
	}
	fmt.Fprintf(b, "## %s Baseline comparison — %s\n\n", icon, mdEscape(d.verdict()))
	fmt.Fprintf(b, "Current %s · baseline %s\n\n", mdEscape(runLabel(d.Current)), mdEscape(runLabel(d.Base)))
	fmt.Fprintf(b, "| | Baseline | Current |\n|---|--:|--:|\n")
	fmt.Fprintf(b, "| Tests | %d | %d |\n| Passed | %d | %d |\n| Failed | %d | %d |\n| Errored | %d | %d |\n| Skipped | %d | %d |\n\n",
		d.Base.Counts.Total, d.Current.Counts.Total, d.Base.Counts.Passed, d.Current.Counts.Passed,
		d.Base.Counts.Failed, d.Current.Counts.Failed, d.Base.Counts.Errored, d.Current.Counts.Errored,
		d.Base.Counts.Skipped, d.Current.Counts.Skipped)
	for _, sec := range d.sections() {
		if len(sec.lines) == 0 {
			continue
		}
		fmt.Fprintf(b, "### %s\n\n", mdEscape(sec.title))
		for _, l := range sec.lines {
			fmt.Fprintf(b, "- %s %s\n", sec.emoji, mdEscape(l.text))
			for _, sub := range l.sub {
				fmt.Fprintf(b, "  - %s\n", mdEscape(sub))
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("### What this means\n\n")
	for _, s := range d.meaning() {
		fmt.Fprintf(b, "- %s\n", mdEscape(s))
	}
	if err := b.Flush(); err != nil {
		return fmt.Errorf("write diff: %w", err)
	}
	return nil
}

// jsonDiff is the JSON document: the Diff plus its verdict.
type jsonDiff struct {
	SchemaVersion string       `json:"schemaVersion"`
	Regressed     bool         `json:"regressed"`
	Regressions   map[Kind]int `json:"regressions"`
	*Diff
}

// WriteJSON renders the diff as one indented JSON document with "regressed" and a count of
// regressions by kind on top; durations are nanoseconds.
func (d *Diff) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(jsonDiff{SchemaVersion: "1", Regressed: d.Regressed(), Regressions: d.Regressions(), Diff: d}); err != nil {
		return fmt.Errorf("write diff: %w", err)
	}
	return nil
}

type line struct {
	text string
	sub  []string
}

type section struct {
	title, mark, emoji string
	lines              []line
}

// sections groups the changes for both text renderers, in a fixed order.
func (d *Diff) sections() []section {
	reg := section{title: "Regressions", mark: "✗", emoji: "❌"}
	fixed := section{title: "Fixed since the baseline (stale baseline, not a regression)", mark: "✓", emoji: "✅"}
	other := section{title: "Other changes", mark: "•", emoji: "ℹ️"}
	for _, t := range d.Tests {
		name := testLabel(t.Collection, t.Test)
		switch t.Kind {
		case Regressed:
			reg.lines = append(reg.lines, line{text: fmt.Sprintf("%s: %s → %s", name, t.Before, t.After)})
		case Fixed:
			fixed.lines = append(fixed.lines, line{text: fmt.Sprintf("%s: %s → %s", name, t.Before, t.After)})
		case Added:
			other.lines = append(other.lines, line{text: fmt.Sprintf("new test %s (%s)", name, t.After)})
		case Removed:
			other.lines = append(other.lines, line{text: fmt.Sprintf("test %s is gone (was %s)", name, t.Before)})
		default:
			other.lines = append(other.lines, line{text: fmt.Sprintf("%s: %s → %s", name, t.Before, t.After)})
		}
	}
	for _, l := range d.Latency {
		text := fmt.Sprintf("%s: p95 %s → %s (%s, %+.0f%%; %d vs %d samples; gate %s)", testLabel(l.Collection, l.Test),
			textfmt.Duration(l.BaseP95), textfmt.Duration(l.CurrentP95), signedDur(l.Delta()), l.Percent(), l.BaseSamples, l.CurSamples, textfmt.Duration(l.Tolerance))
		if l.Kind == Slower {
			reg.lines = append(reg.lines, line{text: "slower " + text})
		} else {
			other.lines = append(other.lines, line{text: "faster " + text})
		}
	}
	for _, t := range d.Tools {
		name := t.Server + "/" + t.Tool
		var sub []string
		reviews := 0
		for _, c := range t.Changes {
			tag := "compatible"
			switch {
			case c.Breaking:
				tag = "BREAKING"
			case c.Review():
				tag, reviews = "review", reviews+1
			}
			sub = append(sub, fmt.Sprintf("%s %s %s: %s", tag, c.Where, c.Path, c.What))
		}
		switch t.Kind {
		case Removed:
			reg.lines = append(reg.lines, line{text: "tool " + name + " was removed"})
		case Breaking:
			reg.lines = append(reg.lines, line{text: "tool " + name + " changed incompatibly", sub: sub})
		case Added:
			other.lines = append(other.lines, line{text: "new tool " + name})
		default:
			text := "tool " + name + " changed compatibly"
			if reviews > 0 {
				text = fmt.Sprintf("tool %s changed: nothing breaking found, %s left to review", name, textfmt.Plural(reviews, "change"))
			}
			other.lines = append(other.lines, line{text: text, sub: sub})
		}
	}
	return []section{reg, fixed, other}
}

// verdict is the one-line outcome.
func (d *Diff) verdict() string {
	r := d.Regressions()
	if len(r) == 0 {
		if d.Empty() {
			return "NO CHANGE"
		}
		return "NO REGRESSION"
	}
	kinds := make([]string, 0, len(r))
	total := 0
	for k, n := range r {
		total += n
		kinds = append(kinds, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(kinds)
	return fmt.Sprintf("REGRESSED: %s (%s)", textfmt.Plural(total, "regression"), strings.Join(kinds, ", "))
}

// meaning derives the "what this means" sentences.
func (d *Diff) meaning() []string {
	var out []string
	r := d.Regressions()
	if len(r) == 0 {
		out = append(out, fmt.Sprintf("Nothing got worse across the %s both runs share: safe to merge as far as this collection can tell.", textfmt.Plural(d.Compared, "test")))
	}
	if n := r[Regressed]; n > 0 {
		out = append(out, fmt.Sprintf("%s that passed on the baseline now %s: a behaviour change in the server, or a test that relied on it.", textfmt.Plural(n, "test"), agree(n, "fails", "fail")))
	}
	if n := r[Slower]; n > 0 {
		out = append(out, fmt.Sprintf("%s got slower than the tolerance: a single run is noisy, so re-run before blaming the code; a repeat is a real slowdown.",
			textfmt.Plural(n, "test")))
	}
	if !d.Options.IgnoreLatency && d.LatencyCompared > 0 {
		out = append(out, d.latencyGate())
	}
	if n := r[Removed] + r[Breaking]; n > 0 {
		out = append(out, fmt.Sprintf("%s %s removed or changed incompatibly: existing clients and prompts that call %s will break.", textfmt.Plural(n, "tool"), agree(n, "was", "were"), agree(n, "it", "them")))
	}
	fixed := 0
	for _, t := range d.Tests {
		if t.Kind == Fixed {
			fixed++
		}
	}
	if fixed > 0 {
		out = append(out, fmt.Sprintf("%s failing on the baseline now %s: the baseline is stale — save a new one once this lands.", textfmt.Plural(fixed, "test"), agree(fixed, "passes", "pass")))
	}
	return out
}

// latencyGate says what the latency comparison used.
func (d *Diff) latencyGate() string {
	o := d.Options
	s := fmt.Sprintf("Latency gate: a p95 change beyond %.0f%% and %s", o.LatencyRelative*100, textfmt.Duration(o.LatencyAbsolute))
	if d.NoiseFloored == 0 {
		return s + fmt.Sprintf(" (%s compared, each with at least %d samples a side).", textfmt.Plural(d.LatencyCompared, "test"), o.MinSamples)
	}
	return s + fmt.Sprintf("; %d of the %s compared had fewer than %d samples on a side, too few to tell noise from a change, so they needed more than %s.",
		d.NoiseFloored, textfmt.Plural(d.LatencyCompared, "test"), o.MinSamples, textfmt.Duration(max(o.NoiseFloor, o.LatencyAbsolute)))
}

// agree picks the singular or plural word for n.
func agree(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func runLabel(r RunInfo) string {
	s := "run " + r.ID
	if r.ID == "" {
		s = "run"
	}
	if r.Git != nil && r.Git.Branch != "" {
		s += " (" + r.Git.Branch
		if r.Git.Commit != "" {
			s += " @ " + textfmt.ShortCommit(r.Git.Commit)
		}
		s += ")"
	}
	return s
}

func testLabel(col, test string) string {
	if col == "" {
		return test
	}
	return col + " › " + test
}

func signedDur(d time.Duration) string {
	if d < 0 {
		return "-" + textfmt.Duration(-d)
	}
	return "+" + textfmt.Duration(d)
}

// mdEscape escapes text for GitHub markdown: HTML-significant characters become entities and
// markdown punctuation is backslash-escaped.
func mdEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '|', '#', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n', '\r':
			b.WriteByte(' ')
		default:
			if r < 0x20 || r == 0x7f {
				b.WriteRune('\uFFFD')
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
