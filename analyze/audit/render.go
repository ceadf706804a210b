package audit

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpspec/mcpspec/internal/textfmt"
	"github.com/mcpspec/mcpspec/result"
)

// ConsoleOptions tunes [WriteConsole].
type ConsoleOptions struct {
	// Explain adds, per finding, every signal that fired and the rule's explanation.
	Explain bool
	// FailOn marks the findings at or above it ("" = none marked).
	FailOn *Severity
}

// WriteConsole renders the report for a terminal: one block per finding, highest severity
// first, then a summary line. Nothing in the output is invisible or a terminal escape: the
// evidence is rendered visibly.
func WriteConsole(w io.Writer, rep *Report, opts *ConsoleOptions) error {
	var o ConsoleOptions
	if opts != nil {
		o = *opts
	}
	ew := &errWriter{w: w}
	mode := "passive: metadata only, no tool was called"
	if rep.Mode == ActiveMode {
		mode = "active: tools were called within the fence"
	}
	ew.printf("mcpspec audit (%s)\n", mode)
	for _, s := range rep.Servers {
		lock := "not in the lockfile"
		if s.Locked {
			lock = "pinned in " + rep.LockFile
		}
		ew.printf("  %s %s (protocol %s): %s, %s, %s, %s; %s\n", visible(s.Name), visible(s.ServerVersion), orNone(s.ProtocolVersion),
			textfmt.Plural(s.Tools, "tool"), textfmt.Plural(s.Prompts, "prompt"), textfmt.Plural(s.Resources, "resource"),
			textfmt.Plural(s.Templates, "resource template"), lock)
	}
	locked := map[string]bool{}
	for _, s := range rep.Servers {
		locked[s.Name] = s.Locked
	}
	explained := map[string]bool{}
	for _, f := range rep.Findings {
		ew.printf("\n%s  %s  %s  [%s]", strings.ToUpper(f.Severity.String()), f.RuleID, visible(f.Subject.String()), f.Confidence)
		if f.Suppressed != nil {
			ew.printf("  suppressed until %s: %s\n", f.Suppressed.Expires, visible(f.Suppressed.Reason))
			if !o.Explain {
				// An accepted risk is one line; --explain shows it in full.
				continue
			}
		} else if o.FailOn != nil && f.Severity >= *o.FailOn {
			ew.printf("  FAILS --fail-on %s", *o.FailOn)
		}
		if f.Suppressed == nil {
			ew.printf("\n")
		}
		ew.printf("  %s\n", visible(f.Message))
		if f.Evidence != nil && f.Evidence.Excerpt != "" {
			ew.printf("  evidence %s: %s\n", visible(pointerOr(f.Evidence.Pointer)), visible(f.Evidence.Excerpt))
			if f.Evidence.Decoded != "" {
				ew.printf("  hidden text: %q\n", clip(f.Evidence.Decoded, 500))
			}
		}
		if o.Explain {
			for _, s := range f.Signals {
				ew.printf("  signal %s: %s", s.Kind, visible(clip(s.Text, 160)))
				if s.Pointer != "" {
					ew.printf(" (at %s)", visible(s.Pointer))
				}
				ew.printf("\n")
			}
			if r, ok := RuleByID(f.RuleID); ok && !explained[r.ID] {
				explained[r.ID] = true
				ew.printf("  why: %s\n", r.Help)
			}
		}
		ew.printf("  fix: %s\n", f.Fix)
		// A line of the lockfile is cited only when the lockfile pins the server: without one
		// the line is that of a file that does not exist (SARIF still needs it).
		if f.Location != nil && (f.Location.File != rep.LockFile || locked[f.Subject.Server]) {
			ew.printf("  at %s:%d\n", f.Location.File, f.Location.Line)
		}
	}
	ew.printf("\n%s\n", summaryLine(rep))
	return ew.err
}

// summaryLine counts findings by severity: "2 critical, 1 high, 0 medium, 0 low, 3 info (1 suppressed)".
func summaryLine(rep *Report) string {
	c := rep.Counts()
	suppressed := 0
	for _, f := range rep.Findings {
		if !f.Active() {
			suppressed++
		}
	}
	var parts []string
	for s := Critical; s >= Info; s-- {
		parts = append(parts, fmt.Sprintf("%d %s", c[s], s))
	}
	line := "findings: " + strings.Join(parts, ", ")
	if suppressed > 0 {
		line += fmt.Sprintf(" (%d suppressed)", suppressed)
	}
	return line
}

func orNone(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		// The last guard: whatever a rule put in a finding unrendered, no escape reaches the
		// terminal.
		_, e.err = io.WriteString(e.w, textfmt.Clean(fmt.Sprintf(format, args...)))
	}
}

// WriteJSON writes the report as indented JSON (schema/audit.v1.json describes it).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write audit json: %w", err)
	}
	return nil
}

// ToRun converts the report into a test run for the test reporters (JUnit, Markdown, HTML):
// one collection per server, one test per finding — failed at or above failOn, passed below
// it, skipped when suppressed — and one passing test for a server without findings.
func ToRun(rep *Report, failOn Severity, started time.Time, took time.Duration) *result.Run {
	run := &result.Run{SchemaVersion: result.SchemaVersion, ID: "audit-" + started.UTC().Format("20060102T150405Z"), StartedAt: started, Duration: took}
	for _, s := range rep.Servers {
		col := &result.Collection{Name: "mcpspec audit: " + s.Name, File: rep.LockFile, StartedAt: started, Duration: took,
			Servers: []result.Server{{Name: s.Name, ServerName: s.ServerName, ServerVersion: s.ServerVersion, ProtocolVersion: s.ProtocolVersion}}}
		for _, f := range rep.Findings {
			if f.Subject.Server != s.Name && !(f.Subject.Kind == KindSuppression && len(rep.Servers) > 0 && s.Name == rep.Servers[0].Name) {
				continue
			}
			t := &result.Test{ID: f.Fingerprint(), Name: fmt.Sprintf("[%s] %s: %s", f.Severity, f.RuleID, visible(f.Subject.String())),
				Server: s.Name, Kind: "audit", Target: visible(f.Subject.Name), Tags: []string{"security", f.RuleID}}
			detail := visible(f.Message) + "; fix: " + f.Fix
			fail := result.Failure{Assertion: f.RuleID, Message: detail}
			if f.Evidence != nil {
				fail.Path, fail.Actual = f.Evidence.Pointer, f.Evidence.Excerpt
			}
			switch {
			case f.Suppressed != nil:
				t.Status, t.SkipReason = result.Skipped, fmt.Sprintf("suppressed until %s: %s", f.Suppressed.Expires, visible(f.Suppressed.Reason))
			case f.Severity >= failOn:
				t.Status, t.Failures = result.Failed, []result.Failure{fail}
			default:
				t.Status, t.Response = result.Passed, fmt.Sprintf("%s (below --fail-on %s)", detail, failOn)
			}
			t.Attempts = []result.Attempt{{Status: t.Status, Failures: t.Failures}}
			col.Tests = append(col.Tests, t)
		}
		if len(col.Tests) == 0 {
			col.Tests = []*result.Test{{ID: "no-findings-" + slug(s.Name), Name: "audit: no findings", Server: s.Name, Kind: "audit",
				Status: result.Passed, Attempts: []result.Attempt{{Status: result.Passed}}}}
		}
		run.Collections = append(run.Collections, col)
	}
	return run
}
