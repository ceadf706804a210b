package reporters

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
)

// JUnit writes JUnit XML as CI dashboards read it (the Jenkins/Ant shape that go-junit-report
// produces, checked against testdata/junit/junit.xsd): one <testsuite> per collection, with
// properties for the run and each server (transport, target, protocol version, server name and
// version); one <testcase> per test with <failure> (assertion failures), <error> (the fault
// category as type) or <skipped>; the attempt history, request and response excerpts in
// <system-out> and the server's stderr excerpt in <system-err>.
type JUnit struct {
	opts Options
}

// NewJUnit returns the JUnit reporter; it reads Options.ExcerptLimit.
func NewJUnit(opts *Options) *JUnit { return &JUnit{opts: opts.orDefault()} }

// Report implements [Reporter].
func (j *JUnit) Report(w io.Writer, run *result.Run) error {
	if run == nil {
		return errNilRun
	}
	suites := junit.Testsuites{Name: "mcpspec", Time: seconds(run.Duration)}
	for i, c := range run.Collections {
		if c == nil {
			continue
		}
		suites.AddSuite(j.suite(i, run, c))
	}
	if _, err := io.WriteString(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"); err != nil {
		return fmt.Errorf("junit report: %w", err)
	}
	if err := suites.WriteXML(w); err != nil {
		return fmt.Errorf("junit report: %w", err)
	}
	return nil
}

func (j *JUnit) suite(id int, run *result.Run, c *result.Collection) junit.Testsuite {
	name := c.Name
	if name == "" {
		name = c.File
	}
	s := junit.Testsuite{
		Name: xmlSafe(name),
		ID:   id,
		Time: seconds(c.Duration),
		File: xmlSafe(c.File),
	}
	if !c.StartedAt.IsZero() {
		s.Timestamp = c.StartedAt.UTC().Format(time.RFC3339)
	}
	prop := func(k, v string) {
		if v != "" {
			s.AddProperty(k, xmlSafe(v))
		}
	}
	prop("mcpspec.run", run.ID)
	prop("mcpspec.environment", run.Environment)
	if run.Git != nil {
		prop("git.branch", run.Git.Branch)
		prop("git.commit", run.Git.Commit)
	}
	if c.Coverage != nil {
		for _, sc := range c.Coverage.Servers {
			for _, k := range kinds(sc) {
				key := "coverage." + sc.Server + "." + k.Name
				prop(key, fmt.Sprintf("%d/%d", len(k.K.Exercised), k.K.Advertised))
				prop(key+".missed", strings.Join(k.K.Missed, ", "))
			}
		}
	}
	for _, sv := range c.Servers {
		p := "server"
		if len(c.Servers) > 1 {
			p = "server." + sv.Name
		} else {
			prop("server", sv.Name)
		}
		prop(p+".transport", sv.Transport)
		prop(p+".target", sv.Target)
		prop(p+".protocolVersion", sv.ProtocolVersion)
		prop(p+".serverName", sv.ServerName)
		prop(p+".serverVersion", sv.ServerVersion)
	}
	for _, t := range c.Tests {
		if t != nil {
			s.AddTestcase(j.testcase(name, c, t))
		}
	}
	if len(c.Findings) > 0 {
		var out strings.Builder
		writeFindings(&out, c.Findings)
		s.SystemOut = &junit.Output{Data: xmlSafe(out.String())}
	}
	return s
}

// writeFindings writes one "finding:" line per finding, with its frame on the next.
func writeFindings(b *strings.Builder, fs []result.Finding) {
	for _, f := range fs {
		fmt.Fprintf(b, "finding: %s\n", oneLine(findingText(f)))
		if f.Frame != "" {
			fmt.Fprintf(b, "  frame: %s\n", excerpt(oneLine(f.Frame), 200))
		}
	}
}

func (j *JUnit) testcase(class string, c *result.Collection, t *result.Test) junit.Testcase {
	lim := j.opts.ExcerptLimit
	tc := junit.Testcase{
		Name:      xmlSafe(t.Name),
		Classname: xmlSafe(class),
		Time:      seconds(t.Duration),
		Status:    string(t.Status),
	}
	switch t.Status {
	case result.Failed:
		msg, typ := "assertion failed", "assertion"
		if len(t.Failures) > 0 {
			msg, typ = t.Failures[0].Message, t.Failures[0].Assertion
		}
		tc.Failure = &junit.Result{Message: xmlSafe(oneLine(msg)), Type: xmlSafe(typ), Data: xmlSafe(failureText(c, t, lim))}
	case result.Errored:
		msg, typ := "error", "Error"
		if t.Error != nil {
			msg, typ = t.Error.Message, t.Error.Category
		}
		tc.Error = &junit.Result{Message: xmlSafe(oneLine(msg)), Type: xmlSafe(typ), Data: xmlSafe(failureText(c, t, lim))}
	case result.Skipped:
		reason := t.SkipReason
		if reason == "" {
			reason = "skipped"
		}
		tc.Skipped = &junit.Result{Message: xmlSafe(oneLine(reason))}
	}
	var out strings.Builder
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&out, "%s: %s\n", k, v)
		}
	}
	if t.Target != "" {
		line("target", strings.TrimSpace(t.Kind+" "+t.Target))
	}
	line("server", t.Server)
	if t.Latency > 0 {
		line("latency", textfmt.Duration(t.Latency))
	}
	if len(t.Attempts) > 0 {
		line("attempts", strconv.Itoa(len(t.Attempts)))
		for i, a := range t.Attempts {
			s := fmt.Sprintf("  #%d %s %s", i+1, a.Status, textfmt.Duration(a.Duration))
			if a.Error != nil {
				s += " " + a.Error.Category + ": " + oneLine(a.Error.Message)
			}
			for _, f := range a.Failures {
				s += " " + f.Assertion + ": " + oneLine(f.Message)
			}
			out.WriteString(s + "\n")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(t.Extracted)) {
		line("extracted "+k, t.Extracted[k])
	}
	if t.Request != "" {
		line("request", excerpt(t.Request, lim))
	}
	if t.Response != "" {
		line("response", excerpt(t.Response, lim))
	}
	writeFindings(&out, t.Findings)
	if out.Len() > 0 {
		tc.SystemOut = &junit.Output{Data: xmlSafe(out.String())}
	}
	if t.Stderr != "" {
		tc.SystemErr = &junit.Output{Data: xmlSafe(excerpt(t.Stderr, lim))}
	}
	return tc
}

// failureText is the body of a <failure> or <error>: what went wrong, where, and why.
func failureText(c *result.Collection, t *result.Test, lim int) string {
	var b strings.Builder
	for _, f := range t.Failures {
		fmt.Fprintf(&b, "%s", f.Assertion)
		if f.Path != "" {
			fmt.Fprintf(&b, " at %s", f.Path)
		}
		if loc := location(c, &f); loc != "" {
			fmt.Fprintf(&b, " (%s)", loc)
		}
		fmt.Fprintf(&b, ": %s\n", f.Message)
		if f.Expected != "" || f.Actual != "" {
			fmt.Fprintf(&b, "  expected: %s\n  actual:   %s\n", excerpt(f.Expected, lim), excerpt(f.Actual, lim))
		}
	}
	if e := t.Error; e != nil {
		fmt.Fprintf(&b, "%s: %s", e.Category, e.Message)
		if e.Code != 0 {
			fmt.Fprintf(&b, " (code %d)", e.Code)
		}
		b.WriteString("\n")
		if h := hint(e); h != "" {
			fmt.Fprintf(&b, "hint: %s\n", h)
		}
	}
	if retried(t) {
		fmt.Fprintf(&b, "%s\n", attemptLine(t))
	}
	return b.String()
}

// xmlSafe replaces runes XML 1.0 cannot carry (most control characters, lone surrogates,
// U+FFFE/U+FFFF) with U+FFFD, so CDATA sections stay well-formed.
func xmlSafe(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	ok := true
	for _, r := range s {
		if !xmlChar(r) {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	return strings.Map(func(r rune) rune {
		if xmlChar(r) {
			return r
		}
		return '\uFFFD'
	}, s)
}

func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}
