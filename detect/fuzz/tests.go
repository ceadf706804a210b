package fuzz

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpspec/mcpspec/detect/fuzz/mutate"
	"github.com/mcpspec/mcpspec/result"
)

// Kind is the result.Test kind of the fuzzer's test cases.
const Kind = "fuzz"

// expected is what the fuzzer expects of a server, as a failed test case says.
const expected = "graceful handling: an answer, a JSON-RPC error, an isError result, or silence where no answer is due — and the server stays up"

// Tests renders the report as test cases for the reporters: one failed test per finding, with
// its evidence (what was sent, what came back, the server's stderr), one skipped test per
// unconfirmed finding, and one passed test per family that showed no finding.
func (r *Report) Tests() []*result.Test {
	var out []*result.Test
	for _, f := range r.Findings {
		out = append(out, f.test(r.Strict))
	}
	for _, f := range r.Unconfirmed {
		t := f.test(r.Strict)
		t.Status, t.Failures, t.Attempts = result.Skipped, nil, []result.Attempt{}
		t.SkipReason = "unconfirmed, not failing the run: " + f.Detail + "; it did not show again on a fresh session"
		out = append(out, t)
	}
	bugFamilies := map[mutate.Family]bool{}
	for _, f := range r.Findings {
		bugFamilies[f.Family] = true
	}
	for _, fam := range r.FamiliesRun {
		if bugFamilies[fam] {
			continue
		}
		t := &result.Test{ID: "fuzz-" + string(fam), Name: "fuzz " + string(fam), Kind: Kind, Target: string(fam), Attempts: []result.Attempt{}}
		fs := r.Families[fam]
		if fs == nil || fs.Cases == 0 {
			t.Status, t.SkipReason = result.Skipped, fmt.Sprintf("no case of this family among the %d run (seed %d)", r.Cases, r.Seed)
		} else {
			t.Status = result.Passed
			t.Name = fmt.Sprintf("fuzz %s: %d cases, no finding (%s)", fam, fs.Cases, outcomeList(fs.Outcomes))
		}
		out = append(out, t)
	}
	return out
}

// test renders one finding.
func (f *Finding) test(strict bool) *result.Test {
	what := f.Detail
	if f.Count > 1 {
		what += fmt.Sprintf(" (%d cases showed it; the first, case %d, is shown)", f.Count, f.Case)
	}
	if f.Minimized {
		what += fmt.Sprintf("; minimised from %d to %d bytes", f.OriginalSize, f.Size)
	}
	if !f.Reproduced {
		what += "; it did not show again on a fresh session"
	}
	failure := result.Failure{Assertion: Kind, Expected: expected, Actual: string(f.Outcome), Message: what}
	t := &result.Test{
		ID: "fuzz-" + strings.ToLower(f.ID), Name: fmt.Sprintf("fuzz %s %s: %s", f.ID, f.Outcome, f.What),
		Tags: []string{Kind, string(f.Outcome), string(f.Family)}, Kind: Kind, Target: f.target(),
		Status: result.Failed, Failures: []result.Failure{failure}, Duration: f.took,
		Attempts: []result.Attempt{{Status: result.Failed, Failures: []result.Failure{failure}, Duration: f.took}},
		Request:  f.request(), Response: printable(f.Answer), Stderr: f.Stderr,
	}
	return t
}

// target names what the finding addressed: the tool, or the family.
func (f *Finding) target() string {
	if f.Tool != "" {
		return "tools/call " + f.Tool
	}
	if f.BeforeInit {
		return "before initialize"
	}
	return string(f.Family)
}

// request renders what the finding sends.
func (f *Finding) request() string {
	if f.Tool != "" && f.ProgressToken {
		return fmt.Sprintf("tools/call %s %s (with a progressToken in _meta)", f.Tool, printable(f.Args))
	}
	if f.Tool != "" {
		return fmt.Sprintf("tools/call %s %s", f.Tool, printable(f.Args))
	}
	var parts []string
	for _, fr := range f.Frames {
		parts = append(parts, printable(fr))
	}
	return strings.Join(parts, "\n")
}

// printable shows bytes as text when they are UTF-8, else as base64, cut to a readable size.
func printable(b []byte) string {
	if b == nil {
		return ""
	}
	s := ""
	if utf8.Valid(b) {
		s = string(b)
	} else {
		s = "base64:" + base64.StdEncoding.EncodeToString(b)
	}
	if len(s) > excerptSize {
		end := excerptSize
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		s = s[:end] + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return s
}

// outcomeList renders outcome counts in the order of [Outcomes].
func outcomeList(m map[Outcome]int) string {
	var parts []string
	for _, o := range Outcomes() {
		if m[o] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o, m[o]))
		}
	}
	return strings.Join(parts, ", ")
}

// Run renders the report as a whole result.Run (one collection, named after the server) for
// the reporters.
func (r *Report) Run(server string, started time.Time) *result.Run {
	col := &result.Collection{Name: "fuzz " + server, StartedAt: started, Duration: r.Duration, Tests: r.Tests()}
	return &result.Run{SchemaVersion: result.SchemaVersion, ID: started.Format("20060102T150405") + "-fuzz", StartedAt: started,
		Duration: r.Duration, Interrupted: r.StoppedBy == "interrupted", Collections: []*result.Collection{col}}
}
