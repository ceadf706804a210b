package reporters

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
)

// Console is the default, human reporter. As a [Streamer] it writes one ✓/✗ line per finished
// test to Options.Live (on a TTY it also shows the test in progress on a line it rewrites); its
// Report writes the failure digest — every failed or errored test with its collection file,
// assertion path, expected and actual values, response excerpt, error category and hint — then
// the summary and what it means.
type Console struct {
	opts Options

	mu       sync.Mutex // guards the fields below
	streamed int        // tests reported live
	pending  bool       // a transient "running" line is on the TTY
	liveErr  error      // first write error on Live
}

var _ Streamer = (*Console)(nil)

// NewConsole returns a console reporter; opts may be nil.
func NewConsole(opts *Options) *Console { return &Console{opts: opts.orDefault()} }

const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiCyan   = "\x1b[36m"
	clearLine  = "\r\x1b[2K"
)

func (c *Console) paint(code, s string) string {
	if !c.opts.Color || s == "" {
		return s
	}
	return code + s + ansiReset
}

// Streams implements [Streamer]: the console streams progress for a person.
func (c *Console) Streams() StreamKind { return StreamsProgress }

// Event implements [Streamer].
func (c *Console) Event(e result.Event) {
	if c.opts.Live == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.liveErr != nil {
		return
	}
	var b strings.Builder
	switch e.Kind {
	case result.TestStarted:
		if !c.opts.TTY || e.Test == nil {
			return
		}
		b.WriteString(clearLine)
		b.WriteString(c.paint(ansiDim, "  … "+clean(oneLine(fullName(e.Collection, e.Test)))))
		c.pending = true
	case result.TestFinished:
		if e.Test == nil {
			return
		}
		if c.pending {
			b.WriteString(clearLine)
			c.pending = false
		}
		b.WriteString(c.testLine(e.Collection, e.Test))
		c.streamed++
	case result.CollectionFinished, result.RunFinished:
		if !c.pending {
			return
		}
		b.WriteString(clearLine)
		c.pending = false
	default:
		return
	}
	_, c.liveErr = io.WriteString(c.opts.Live, b.String())
}

// testLine is the one-line verdict of a test, newline included.
func (c *Console) testLine(col *result.Collection, t *result.Test) string {
	var mark, tail string
	switch t.Status {
	case result.Passed:
		mark = c.paint(ansiGreen, "✓")
	case result.Failed:
		mark = c.paint(ansiRed, "✗")
		if len(t.Failures) > 0 {
			f := t.Failures[0]
			tail = f.Assertion
			if f.Path != "" {
				tail += " at " + f.Path
			}
		}
	case result.Errored:
		mark = c.paint(ansiRed, "✗")
		tail = "error"
		if t.Error != nil && t.Error.Category != "" {
			tail = "error: " + t.Error.Category
		}
	case result.Skipped:
		mark = c.paint(ansiYellow, "-")
		tail = "skipped"
		if t.SkipReason != "" {
			tail += ": " + t.SkipReason
		}
	default:
		mark = "?"
		tail = string(t.Status)
	}
	var b strings.Builder
	b.WriteString("  ")
	b.WriteString(mark)
	b.WriteString(" ")
	b.WriteString(clean(oneLine(fullName(col, t))))
	if t.Status != result.Skipped {
		// The test's duration includes starting the server for its first session; the
		// response time is the server's answer alone (what the latency summary ranks).
		d := "  " + textfmt.Duration(t.Duration)
		if t.Latency > 0 {
			d += " (response " + textfmt.Duration(t.Latency) + ")"
		}
		b.WriteString(c.paint(ansiDim, d))
	}
	if retried(t) {
		b.WriteString(c.paint(ansiYellow, fmt.Sprintf("  (%d attempts)", len(t.Attempts))))
	}
	if tail != "" {
		b.WriteString(c.paint(ansiDim, "  — "+clean(oneLine(tail))))
	}
	if n := len(t.Findings); n > 0 {
		b.WriteString(c.paint(ansiYellow, "  ⚠ "+textfmt.Plural(n, "finding")))
	}
	b.WriteString("\n")
	for _, f := range t.SnapshotsWritten {
		b.WriteString(c.paint(ansiDim, "      wrote snapshot "+clean(f)) + "\n")
	}
	return b.String()
}

// Report implements [Reporter]. Tests already streamed are not listed again unless
// Options.Verbose; failures are always in the digest.
func (c *Console) Report(w io.Writer, run *result.Run) error {
	if run == nil {
		return errNilRun
	}
	c.mu.Lock()
	streamed, liveErr := c.streamed, c.liveErr
	c.mu.Unlock()

	bw := bufio.NewWriter(w)
	if streamed == 0 || c.opts.Verbose {
		for _, it := range items(run) {
			bw.WriteString(c.testLine(it.Col, it.T))
		}
	}
	c.digest(bw, run)
	c.findings(bw, run)
	c.summary(bw, run)
	return errors.Join(liveErr, bw.Flush())
}

// digest writes the FAILURES section.
func (c *Console) digest(w *bufio.Writer, run *result.Run) {
	ps := problems(run)
	if len(ps) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", c.paint(ansiBold+ansiRed, fmt.Sprintf("FAILURES (%d)", len(ps))))
	lim := c.opts.ExcerptLimit
	for i, it := range ps {
		t := it.T
		verdict := "failed"
		if t.Status == result.Errored {
			verdict = "error"
			if t.Error != nil && t.Error.Category != "" {
				verdict = "error: " + t.Error.Category
			}
		}
		fmt.Fprintf(w, "\n  %s %s\n", c.paint(ansiBold, fmt.Sprintf("%d) %s", i+1, clean(oneLine(fullName(it.Col, t))))), c.paint(ansiRed, "["+verdict+"]"))
		if it.Col.File != "" {
			c.field(w, "collection", "", it.Col.File)
		}
		if t.Target != "" {
			c.field(w, "target", "", t.Kind+" "+t.Target)
		}
		for _, f := range t.Failures {
			a := f.Assertion
			if f.Path != "" {
				a += " at " + f.Path
			}
			if f.Line > 0 {
				a += "  (" + location(it.Col, &f) + ")"
			}
			c.field(w, "assertion", "", a)
			// An expression that failed to evaluate has no actual value: no empty line for it.
			if f.Expected != "" {
				c.field(w, "  expected", ansiGreen, excerpt(f.Expected, lim))
			}
			if f.Actual != "" {
				c.field(w, "  actual", ansiRed, excerpt(f.Actual, lim))
			}
			if f.Message != "" {
				c.field(w, "  message", "", f.Message)
			}
		}
		if e := t.Error; e != nil {
			msg := e.Message
			if e.Code != 0 {
				msg = fmt.Sprintf("%s (code %d)", msg, e.Code)
			}
			c.field(w, "error", "", strings.TrimSpace(e.Category+": "+msg))
			if h := hint(e); h != "" {
				c.field(w, "hint", ansiCyan, h)
			}
		}
		if retried(t) {
			c.field(w, "attempts", "", attemptLine(t))
		}
		if t.Response != "" {
			c.field(w, "response", "", excerpt(t.Response, lim))
		}
		if t.Stderr != "" {
			c.field(w, "stderr", "", excerpt(t.Stderr, lim))
		}
		for _, f := range t.Findings {
			c.finding(w, f)
		}
	}
}

// findings writes the FINDINGS section: what the servers sent that answered no request, for
// the tests the digest does not show and after the last tests.
func (c *Console) findings(w *bufio.Writer, run *result.Run) {
	ss := strays(run)
	if len(ss) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s\n", c.paint(ansiBold+ansiYellow, fmt.Sprintf("FINDINGS (%d)", len(ss))))
	for i, s := range ss {
		fmt.Fprintf(w, "\n  %s\n", c.paint(ansiBold, fmt.Sprintf("%d) %s", i+1, clean(oneLine(strayWhere(s))))))
		c.finding(w, s.F)
	}
}

// finding writes one finding as fields of the test (or collection) above it.
func (c *Console) finding(w *bufio.Writer, f result.Finding) {
	c.field(w, "finding", ansiYellow, findingText(f))
	if f.Frame != "" {
		c.field(w, "  frame", "", excerpt(oneLine(f.Frame), 200))
	}
}

// field writes "     label: value" with continuation lines aligned under the value; the value
// is cleaned of control characters and painted with code (when colour is on) line by line.
func (c *Console) field(w *bufio.Writer, label, code, value string) {
	const col = 17
	prefix := "     " + label + ":"
	if pad := col - utf8.RuneCountInString(prefix); pad > 0 {
		prefix += strings.Repeat(" ", pad)
	} else {
		prefix += " "
	}
	indent := strings.Repeat(" ", utf8.RuneCountInString(prefix))
	for i, l := range strings.Split(strings.TrimRight(clean(value), "\n"), "\n") {
		if i == 0 {
			w.WriteString(prefix)
		} else {
			w.WriteString(indent)
		}
		w.WriteString(c.paint(code, l))
		w.WriteString("\n")
	}
}

// summary writes the verdict line and the "what this means" sentences.
func (c *Console) summary(w *bufio.Writer, run *result.Run) {
	n := run.Counts()
	word := statusWord(run)
	code := ansiBold + ansiGreen
	if word != "PASS" {
		code = ansiBold + ansiRed
	}
	parts := []string{fmt.Sprintf("%d passed", n.Passed)}
	if n.Failed > 0 {
		parts = append(parts, c.paint(ansiRed, fmt.Sprintf("%d failed", n.Failed)))
	}
	if n.Errored > 0 {
		parts = append(parts, c.paint(ansiRed, fmt.Sprintf("%d errored", n.Errored)))
	}
	if n.Skipped > 0 {
		parts = append(parts, c.paint(ansiYellow, fmt.Sprintf("%d skipped", n.Skipped)))
	}
	fmt.Fprintf(w, "\n%s  %s: %s · pass rate %s · %s\n", c.paint(code, word), textfmt.Plural(n.Total, "test"),
		strings.Join(parts, ", "), fmtRate(n), textfmt.Duration(run.Duration))
	for _, s := range interpret(run) {
		fmt.Fprintf(w, "  %s\n", c.paint(ansiDim, s))
	}
	c.coverage(w, run)
}

// coverage writes the coverage of the advertised tools, prompts and resources, per server.
func (c *Console) coverage(w *bufio.Writer, run *result.Run) {
	total := coverageTotal(run)
	if total == "" {
		return
	}
	fmt.Fprintf(w, "\nCoverage: %s\n", total)
	for _, col := range run.Collections {
		if col == nil || col.Coverage == nil {
			continue
		}
		for _, s := range col.Coverage.Servers {
			name := s.Server
			if len(run.Collections) > 1 {
				name = col.Name + " › " + name
			}
			fmt.Fprintf(w, "  %s: %s\n", clean(oneLine(name)), serverCoverageLine(s))
			if m := missedLine(s); m != "" {
				fmt.Fprintf(w, "    %s\n", c.paint(ansiDim, "never exercised: "+clean(oneLine(m))))
			}
		}
	}
}
