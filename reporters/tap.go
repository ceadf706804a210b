package reporters

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
)

// TAP writes the Test Anything Protocol, version 13: a plan line, one test point per test
// ("ok 3 - collection › test"), "# SKIP reason" directives for skipped tests, a YAML diagnostics
// block ("  ---" … "  ...") under every failed or errored test, and "Bail out!" when the run was
// interrupted. Without Options.Live the whole document is written by Report with the plan first.
//
// With Options.Live set, TAP streams: test points are written to Live as tests finish, and Report
// completes the same stream — it writes any test not yet streamed, then the plan last (TAP allows
// a trailing plan) and the bail-out line. Pass Live to Report as w in that case.
type TAP struct {
	opts Options

	mu       sync.Mutex // guards the fields below
	header   bool       // "TAP version 13" written to Live
	n        int        // test points written to Live
	seen     map[*result.Test]bool
	liveErr  error
	lastColl *result.Collection
}

var _ Streamer = (*TAP)(nil)

// NewTAP returns the TAP reporter; it reads Options.Live and Options.ExcerptLimit.
func NewTAP(opts *Options) *TAP {
	return &TAP{opts: opts.orDefault(), seen: map[*result.Test]bool{}}
}

// Streams implements [Streamer]: TAP streams its report.
func (t *TAP) Streams() StreamKind { return StreamsReport }

// Event implements [Streamer]; it does nothing unless Options.Live is set.
func (t *TAP) Event(e result.Event) {
	if t.opts.Live == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.liveErr != nil {
		return
	}
	var b bytes.Buffer
	if !t.header {
		b.WriteString("TAP version 13\n")
		t.header = true
	}
	if e.Kind == result.TestFinished && e.Test != nil && !t.seen[e.Test] {
		t.seen[e.Test] = true
		t.n++
		t.point(&b, t.n, e.Collection, e.Test)
	}
	if b.Len() > 0 {
		_, t.liveErr = t.opts.Live.Write(b.Bytes())
	}
}

// Report implements [Reporter].
func (t *TAP) Report(w io.Writer, run *result.Run) error {
	if run == nil {
		return errNilRun
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	all := items(run)
	var b bytes.Buffer
	streaming := t.header
	if !streaming {
		t.lastColl = nil
		b.WriteString("TAP version 13\n")
		fmt.Fprintf(&b, "1..%d\n", len(all))
	}
	n := t.n
	for _, it := range all {
		if t.seen[it.T] {
			continue
		}
		n++
		t.point(&b, n, it.Col, it.T)
	}
	for _, c := range run.Collections {
		if c != nil {
			tapFindings(&b, c.Findings)
		}
	}
	if streaming {
		fmt.Fprintf(&b, "1..%d\n", n)
	}
	if total := coverageTotal(run); total != "" {
		fmt.Fprintf(&b, "# coverage: %s\n", total)
		for _, c := range run.Collections {
			if c == nil || c.Coverage == nil {
				continue
			}
			for _, s := range c.Coverage.Servers {
				fmt.Fprintf(&b, "# coverage: %s: %s\n", clean(oneLine(s.Server)), serverCoverageLine(s))
				if m := missedLine(s); m != "" {
					fmt.Fprintf(&b, "#   never exercised: %s\n", clean(oneLine(m)))
				}
			}
		}
	}
	switch c := run.Counts(); {
	case run.BailedAfter != "":
		fmt.Fprintf(&b, "Bail out! --bail: stopped after %s did not pass (%d of %s ran)\n", oneLine(clean(run.BailedAfter)), c.Total-c.Skipped, textfmt.Plural(c.Total, "test"))
	case run.Interrupted:
		fmt.Fprintf(&b, "Bail out! run interrupted after %d of %s\n", c.Total-c.Skipped, textfmt.Plural(c.Total, "test"))
	}
	_, err := w.Write(b.Bytes())
	if err = errors.Join(t.liveErr, err); err != nil {
		return fmt.Errorf("tap report: %w", err)
	}
	return nil
}

// point writes one test point and, for failures, its YAML diagnostics.
func (t *TAP) point(b *bytes.Buffer, n int, c *result.Collection, tc *result.Test) {
	if c != t.lastColl && c != nil {
		t.lastColl = c
		fmt.Fprintf(b, "# collection: %s", clean(oneLine(c.Name)))
		if c.File != "" {
			fmt.Fprintf(b, " (%s)", clean(oneLine(c.File)))
		}
		b.WriteString("\n")
	}
	desc := tapEscape(fullName(c, tc))
	switch tc.Status {
	case result.Passed:
		fmt.Fprintf(b, "ok %d - %s\n", n, desc)
		if retried(tc) {
			fmt.Fprintf(b, "# %s\n", clean(oneLine(attemptLine(tc))))
		}
		tapFindings(b, tc.Findings)
	case result.Skipped:
		reason := tc.SkipReason
		if reason == "" {
			reason = "skipped"
		}
		fmt.Fprintf(b, "ok %d - %s # SKIP %s\n", n, desc, clean(oneLine(reason)))
		tapFindings(b, tc.Findings)
	default:
		fmt.Fprintf(b, "not ok %d - %s\n", n, desc)
		t.diagnostics(b, c, tc)
	}
}

// tapFindings writes findings as comment lines, for a test without a diagnostics block (and
// for those of a collection, after its last test).
func tapFindings(b *bytes.Buffer, fs []result.Finding) {
	for _, f := range fs {
		fmt.Fprintf(b, "# finding: %s\n", clean(oneLine(findingText(f))))
		if f.Frame != "" {
			fmt.Fprintf(b, "#   frame: %s\n", clean(oneLine(excerpt(f.Frame, 200))))
		}
	}
}

// tapEscape makes a test description one line with '#' and '\' escaped, as TAP requires.
func tapEscape(s string) string {
	s = strings.ReplaceAll(clean(oneLine(s)), `\`, `\\`)
	return strings.ReplaceAll(s, "#", `\#`)
}

// tapDiag is the YAML diagnostics block; field order is the reading order.
type tapDiag struct {
	Message    string            `yaml:"message"`
	Severity   string            `yaml:"severity"`
	Collection string            `yaml:"collection,omitempty"`
	File       string            `yaml:"file,omitempty"`
	Target     string            `yaml:"target,omitempty"`
	Category   string            `yaml:"category,omitempty"`
	Code       int               `yaml:"code,omitempty"`
	Hint       string            `yaml:"hint,omitempty"`
	Failures   []tapFailure      `yaml:"failures,omitempty"`
	Duration   string            `yaml:"duration,omitempty"`
	Attempts   []string          `yaml:"attempts,omitempty"`
	Response   string            `yaml:"response,omitempty"`
	Stderr     string            `yaml:"stderr,omitempty"`
	Extracted  map[string]string `yaml:"extracted,omitempty"`
	Findings   []result.Finding  `yaml:"findings,omitempty"`
}

type tapFailure struct {
	Assertion string `yaml:"assertion"`
	Path      string `yaml:"path,omitempty"`
	Line      int    `yaml:"line,omitempty"`
	Expected  string `yaml:"expected,omitempty"`
	Actual    string `yaml:"actual,omitempty"`
	Message   string `yaml:"message,omitempty"`
}

func (t *TAP) diagnostics(b *bytes.Buffer, c *result.Collection, tc *result.Test) {
	lim := t.opts.ExcerptLimit
	d := tapDiag{Severity: "fail", Duration: textfmt.Duration(tc.Duration)}
	if c != nil {
		d.Collection, d.File = c.Name, c.File
	}
	if tc.Target != "" {
		d.Target = strings.TrimSpace(tc.Kind + " " + tc.Target)
	}
	for _, f := range tc.Failures {
		d.Failures = append(d.Failures, tapFailure{
			Assertion: f.Assertion, Path: f.Path, Line: f.Line,
			Expected: excerpt(f.Expected, lim), Actual: excerpt(f.Actual, lim), Message: f.Message,
		})
	}
	if len(tc.Failures) > 0 {
		d.Message = tc.Failures[0].Message
	}
	if e := tc.Error; e != nil {
		d.Severity = "error"
		d.Message = e.Message
		d.Category, d.Code, d.Hint = e.Category, e.Code, hint(e)
	}
	if d.Message == "" {
		d.Message = string(tc.Status)
	}
	if retried(tc) {
		for _, a := range tc.Attempts {
			d.Attempts = append(d.Attempts, string(a.Status)+" "+textfmt.Duration(a.Duration))
		}
	}
	d.Response = excerpt(tc.Response, lim)
	d.Stderr = excerpt(tc.Stderr, lim)
	d.Extracted = tc.Extracted
	for _, f := range tc.Findings {
		f.Frame = excerpt(f.Frame, 200)
		d.Findings = append(d.Findings, f)
	}
	var buf bytes.Buffer
	d.write(&buf)
	b.WriteString("  ---\n")
	for _, l := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		b.WriteString("  ")
		b.WriteString(l)
		b.WriteString("\n")
	}
	b.WriteString("  ...\n")
}
