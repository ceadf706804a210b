package reporters

import (
	"fmt"
	"html"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
)

// Markdown writes a GitHub-flavoured report sized for a pull-request comment: a status line with
// an emoji, a counts table per collection, "what this means" sentences, each failure in a
// collapsed <details> block, and a latency table. The output never exceeds Options.MarkdownLimit
// bytes (65000 by default): failures that do not fit are left out with a note saying how many.
type Markdown struct {
	opts Options
}

// NewMarkdown returns the markdown reporter; it reads Options.Title, ExcerptLimit and
// MarkdownLimit.
func NewMarkdown(opts *Options) *Markdown { return &Markdown{opts: opts.orDefault()} }

// maxSlowest is how many tests the latency tables list.
const maxSlowest = 10

// maxTableCollections caps the counts table so a run of many collections still fits.
const maxTableCollections = 50

// Report implements [Reporter].
func (m *Markdown) Report(w io.Writer, run *result.Run) error {
	if run == nil {
		return errNilRun
	}
	head := m.head(run)
	lat := m.latency(run)
	const noteReserve = 400
	budget := m.opts.MarkdownLimit - len(head) - len(lat) - noteReserve

	var fails strings.Builder
	ps := problems(run)
	if len(ps) > 0 {
		fmt.Fprintf(&fails, "### Failures (%d)\n\n", len(ps))
	}
	shown := 0
	for _, it := range ps {
		blk := m.failure(it)
		if fails.Len()+len(blk) > budget {
			break
		}
		fails.WriteString(blk)
		shown++
	}
	if shown < len(ps) {
		fmt.Fprintf(&fails, "> [!NOTE]\n> %s not shown here: this comment is kept under %d bytes. The JSON or HTML report has every failure.\n\n",
			textfmt.Plural(len(ps)-shown, "more failure"), m.opts.MarkdownLimit)
	}
	out := head + fails.String() + m.findings(run, budget-fails.Len()) + m.coverage(run) + lat
	if len(out) > m.opts.MarkdownLimit {
		note := "\n\n… report truncated to fit the comment size limit.\n"
		cut := m.opts.MarkdownLimit - len(note)
		if cut < 0 {
			cut = 0
		}
		for cut > 0 && !utf8.RuneStart(out[cut]) {
			cut--
		}
		out = out[:cut] + note
	}
	if _, err := io.WriteString(w, out); err != nil {
		return fmt.Errorf("markdown report: %w", err)
	}
	return nil
}

// coverage is the coverage section: one table row per server and kind, with what was never
// exercised; "" when the run recorded none.
func (m *Markdown) coverage(run *result.Run) string {
	total := coverageTotal(run)
	if total == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Coverage\n\n%s\n\n| Server | Kind | Exercised | Never exercised |\n|---|---|---|---|\n", mdText(total))
	for _, c := range run.Collections {
		if c == nil || c.Coverage == nil {
			continue
		}
		for _, s := range c.Coverage.Servers {
			for _, k := range kinds(s) {
				missed := k.K.Missed
				more := ""
				if len(missed) > maxMissedNames {
					more = fmt.Sprintf(", … (%d more)", len(missed)-maxMissedNames)
					missed = missed[:maxMissedNames]
				}
				names := make([]string, len(missed))
				for i, n := range missed {
					names[i] = mdCode(n)
				}
				fmt.Fprintf(&b, "| %s | %s | %d/%d | %s%s |\n", mdText(s.Server), k.Name, len(k.K.Exercised), k.K.Advertised, strings.Join(names, ", "), more)
			}
		}
	}
	b.WriteString("\n")
	return b.String()
}

// head is the status line, the counts table and what it means.
func (m *Markdown) head(run *result.Run) string {
	var b strings.Builder
	n := run.Counts()
	emoji := map[string]string{"PASS": "✅", "FAIL": "❌", "INTERRUPTED": "⚠️"}[statusWord(run)]
	fmt.Fprintf(&b, "## %s %s — %s\n\n", emoji, mdText(title(m.opts, run)), statusWord(run))
	fmt.Fprintf(&b, "**%s** · %d passed · %d failed · %d errored · %d skipped · pass rate %s · %s\n",
		textfmt.Plural(n.Total, "test"), n.Passed, n.Failed, n.Errored, n.Skipped, fmtRate(n), textfmt.Duration(run.Duration))
	var meta []string
	if s := fmtTime(run.StartedAt); s != "" {
		meta = append(meta, "started "+s)
	}
	if run.Environment != "" {
		meta = append(meta, "environment "+mdCode(run.Environment))
	}
	if g := run.Git; g != nil && (g.Branch != "" || g.Commit != "") {
		s := "git"
		if g.Branch != "" {
			s += " " + mdCode(g.Branch)
		}
		if g.Commit != "" {
			s += " @ " + mdCode(textfmt.ShortCommit(g.Commit))
		}
		meta = append(meta, s)
	}
	switch {
	case run.BailedAfter != "":
		meta = append(meta, "**stopped by --bail**")
	case run.Interrupted:
		meta = append(meta, "**interrupted**")
	}
	if len(meta) > 0 {
		b.WriteString("\n" + strings.Join(meta, " · ") + "\n")
	}
	b.WriteString("\n| Collection | Server | Tests | ✅ Passed | ❌ Failed | 💥 Errored | ⏭️ Skipped | Pass rate | Duration |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	rows := 0
	for _, c := range run.Collections {
		if c == nil {
			continue
		}
		if rows == maxTableCollections {
			fmt.Fprintf(&b, "| … %s more | | | | | | | | |\n", textfmt.Plural(len(run.Collections)-rows, "collection"))
			break
		}
		rows++
		cc := c.Counts()
		var servers []string
		for _, s := range c.Servers {
			v := s.ServerName
			if v == "" {
				v = s.Name
			}
			if s.ServerVersion != "" {
				v += " " + s.ServerVersion
			}
			servers = append(servers, mdCode(v)+" ("+mdText(s.Transport)+")")
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %s | %s |\n", mdText(c.Name), strings.Join(servers, "<br>"),
			cc.Total, cc.Passed, cc.Failed, cc.Errored, cc.Skipped, fmtRate(cc), textfmt.Duration(c.Duration))
	}
	fmt.Fprintf(&b, "| **Total** | | **%d** | **%d** | **%d** | **%d** | **%d** | **%s** | **%s** |\n\n",
		n.Total, n.Passed, n.Failed, n.Errored, n.Skipped, fmtRate(n), textfmt.Duration(run.Duration))
	b.WriteString("### What this means\n\n")
	for _, s := range interpret(run) {
		b.WriteString("- " + mdText(s) + "\n")
	}
	b.WriteString("\n")
	return b.String()
}

// failure is one collapsed failure block.
func (m *Markdown) failure(it item) string {
	lim := m.opts.ExcerptLimit
	if lim > 1500 {
		lim = 1500
	}
	t := it.T
	var b strings.Builder
	icon, what := "❌", "failed"
	if t.Status == result.Errored {
		icon, what = "💥", "error"
		if t.Error != nil && t.Error.Category != "" {
			what = string(t.Error.Category)
		}
	} else if len(t.Failures) > 0 {
		what = t.Failures[0].Assertion
		if t.Failures[0].Path != "" {
			what += " at " + t.Failures[0].Path
		}
	}
	fmt.Fprintf(&b, "<details>\n<summary>%s <b>%s</b> — %s</summary>\n\n", icon,
		html.EscapeString(clean(oneLine(fullName(it.Col, t)))), html.EscapeString(clean(oneLine(what))))
	if it.Col.File != "" {
		fmt.Fprintf(&b, "- **Collection:** %s\n", mdCode(it.Col.File))
	}
	if t.Target != "" {
		fmt.Fprintf(&b, "- **Target:** %s %s\n", mdText(t.Kind), mdCode(t.Target))
	}
	for _, f := range t.Failures {
		a := mdCode(f.Assertion)
		if f.Path != "" {
			a += " at " + mdCode(f.Path)
		}
		if f.Line > 0 {
			a += " (" + mdCode(location(it.Col, &f)) + ")"
		}
		fmt.Fprintf(&b, "- **Assertion:** %s — %s\n", a, mdMessage(f.Message))
		if f.Expected != "" {
			fmt.Fprintf(&b, "  - expected: %s\n", mdCode(excerpt(f.Expected, lim)))
		}
		if f.Actual != "" {
			fmt.Fprintf(&b, "  - actual: %s\n", mdCode(excerpt(f.Actual, lim)))
		}
	}
	if e := t.Error; e != nil {
		msg := e.Message
		if e.Code != 0 {
			msg = fmt.Sprintf("%s (code %d)", msg, e.Code)
		}
		fmt.Fprintf(&b, "- **Error:** %s — %s\n", mdCode(string(e.Category)), mdMessage(msg))
		if h := hint(e); h != "" {
			fmt.Fprintf(&b, "- **Hint:** %s\n", mdText(h))
		}
	}
	if retried(t) {
		fmt.Fprintf(&b, "- **Attempts:** %s\n", mdText(attemptLine(t)))
	}
	if t.Response != "" {
		fmt.Fprintf(&b, "\n**Response**\n\n%s", mdFence(excerpt(t.Response, lim)))
	}
	for _, f := range t.Findings {
		fmt.Fprintf(&b, "- **Finding:** %s\n", mdFinding(f))
	}
	if t.Stderr != "" {
		fmt.Fprintf(&b, "\n**Server stderr**\n\n%s", mdFence(excerpt(t.Stderr, lim)))
	}
	b.WriteString("\n</details>\n\n")
	return b.String()
}

// findings is the section of findings the failure blocks do not show, cut to budget bytes.
func (m *Markdown) findings(run *result.Run, budget int) string {
	ss := strays(run)
	if len(ss) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "### Findings (%d)\n\n", len(ss))
	for i, s := range ss {
		line := fmt.Sprintf("- %s: %s\n", mdText(oneLine(strayWhere(s))), mdFinding(s.F))
		if b.Len()+len(line) > budget {
			fmt.Fprintf(&b, "- … %s more (the JSON or HTML report has them all)\n", textfmt.Plural(len(ss)-i, "finding"))
			break
		}
		b.WriteString(line)
	}
	b.WriteString("\n")
	return b.String()
}

// mdFinding renders a finding: its category, message and frame.
func mdFinding(f result.Finding) string {
	s := mdCode(string(f.Category)) + " — " + mdText(f.Message)
	if f.Frame != "" {
		s += " " + mdCode(excerpt(f.Frame, 200))
	}
	return s
}

// latency is the latency section: run percentiles and the slowest tests.
func (m *Markdown) latency(run *result.Run) string {
	ds := latencies(run)
	if len(ds) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("### Latency\n\n| Tests | p50 | p95 | p99 | max |\n|--:|--:|--:|--:|--:|\n")
	fmt.Fprintf(&b, "| %d | %s | %s | %s | %s |\n\n", len(ds), textfmt.Duration(percentile(ds, 50)), textfmt.Duration(percentile(ds, 95)),
		textfmt.Duration(percentile(ds, 99)), textfmt.Duration(percentile(ds, 100)))
	b.WriteString("| Slowest tests | Status | Latency | Duration | Attempts |\n|---|---|--:|--:|--:|\n")
	for _, it := range slowest(run, maxSlowest) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d |\n", mdText(oneLine(fullName(it.Col, it.T))), it.T.Status,
			textfmt.Duration(it.T.Latency), textfmt.Duration(it.T.Duration), len(it.T.Attempts))
	}
	b.WriteString("\n")
	return b.String()
}

// mdText escapes text for GitHub markdown, including table cells ([textfmt.MarkdownText]).
func mdText(s string) string { return textfmt.MarkdownText(s) }

// mdCode renders s as an inline code span that is safe in a table cell.
func mdCode(s string) string {
	s = strings.ReplaceAll(clean(oneLine(s)), "|", `\|`)
	if s == "" {
		return "` `"
	}
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

// mdFence renders s as a fenced code block whose fence is longer than any backtick run in s.
// mdMessage renders a message in a list item: one line as text; several lines (an expr error
// with its caret line) as the first line and then the whole message in an indented fence, so
// the caret still points at the right column.
func mdMessage(s string) string {
	first, _, multi := strings.Cut(strings.TrimRight(s, "\n"), "\n")
	if !multi {
		return mdText(s)
	}
	fenced := mdFence(s)
	return mdText(first) + "\n\n  " + strings.ReplaceAll(strings.TrimRight(fenced, "\n"), "\n", "\n  ")
}

func mdFence(s string) string {
	s = clean(s)
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}
