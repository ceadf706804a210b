package runner_test

import (
	"strings"
	"testing"

	"github.com/mcpspec/mcpspec/mcptest"
	"github.com/mcpspec/mcpspec/result"
	"github.com/mcpspec/mcpspec/runner"
)

// TestFindingsAreReported runs tests against a server that sends a stray answer before every
// real one and a server that answers every call twice: each finding is reported (a stray one
// with the test it came during, a duplicate with its test, or the next on the session, or the
// collection), and under Strict the tests they came with fail.
func TestFindingsAreReported(t *testing.T) {
	t.Parallel()
	stray := tcpServer(t, &mcptest.Options{StrayAnswer: true})
	dup := tcpServer(t, &mcptest.Options{DuplicateAnswers: true})
	for _, strict := range []bool{false, true} {
		col := parse(t, `
name: Findings
servers:
  stray: {url: "tcp://STRAY"}
  dup: {url: "tcp://DUP"}
tests:
  - {id: s1, server: stray, call: echo, with: {text: a}}
  - {id: s2, server: stray, call: echo, with: {text: b}}
  - {id: d1, server: dup, call: echo, with: {text: a}}
  - {id: d2, server: dup, call: echo, with: {text: b}}
  - {id: d3, server: dup, call: echo, with: {text: c}}
`, nil, "STRAY", stray.Addr, "DUP", dup.Addr)
		run, err := runCols(t, &runner.Options{Strict: strict}, col)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"s1", "s2"} {
			tt := find(t, run, id)
			if len(tt.Findings) != 1 || !strings.Contains(tt.Findings[0].Message, "never issued") ||
				tt.Findings[0].Server != "stray" || tt.Findings[0].Category != "ProtocolError" || !strings.Contains(tt.Findings[0].Frame, "never made") {
				t.Errorf("strict=%v %s: findings %+v, want the stray answer", strict, id, tt.Findings)
			}
		}
		dups := len(run.Collections[0].Findings)
		for _, id := range []string{"d1", "d2", "d3"} {
			for _, f := range find(t, run, id).Findings {
				dups++
				if !strings.Contains(f.Message, "not pending") {
					t.Errorf("strict=%v %s: finding %+v, want a duplicate", strict, id, f)
				}
			}
		}
		if dups != 3 || run.Findings() != 5 {
			t.Errorf("strict=%v: %d duplicate answers reported, %d findings in all; want 3 and 5", strict, dups, run.Findings())
		}
		for _, c := range run.Collections {
			for _, tt := range c.Tests {
				want := result.Passed
				if strict && len(tt.Findings) > 0 {
					want = result.Failed
				}
				if tt.Status != want {
					t.Errorf("strict=%v %s: %s with %d findings, want %s", strict, tt.ID, tt.Status, len(tt.Findings), want)
				}
				if want == result.Failed && (len(tt.Failures) != 1 || tt.Failures[0].Assertion != "strict" ||
					!strings.Contains(tt.Failures[0].Message, "answered no request")) {
					t.Errorf("strict %s: failures %+v", tt.ID, tt.Failures)
				}
			}
		}
	}
}
