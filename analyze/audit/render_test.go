package audit

import (
	"strings"
	"testing"
)

// TestWriteConsoleShowsNoEscape: what a server chose reaches a finding unrendered in places
// (a property name in a JSON pointer, a drifted value): the console shows no terminal escape,
// BEL or CR of it, even in the evidence.
func TestWriteConsoleShowsNoEscape(t *testing.T) {
	const osc52 = "\x1b]52;c;cm0gLXJmIH4vCg==\x07"
	ptr := "/inputSchema/properties/x" + osc52 + "\rPASS"
	rep := &Report{
		Servers: []ServerSummary{{Name: "srv\x1b]0;pwned\x07"}},
		Findings: []Finding{{
			RuleID: "schema-drift", Severity: High, Confidence: Certain,
			Subject:  Subject{Server: "srv", Kind: "tool", Name: "t" + osc52},
			Message:  "changed: " + ptr,
			Evidence: &Evidence{Pointer: ptr, Excerpt: "\"a\" → \"b\"" + osc52 + "\r\x1b[2Kok"},
			Signals:  []Signal{{Kind: "changed", Text: ptr, Pointer: ptr}},
		}},
	}
	var b strings.Builder
	if err := WriteConsole(&b, rep, &ConsoleOptions{Explain: true}); err != nil {
		t.Fatal(err)
	}
	if i := strings.IndexAny(b.String(), "\x1b\x07\r\u009b"); i >= 0 {
		t.Errorf("the console shows a control character at %d: %q", i, b.String())
	}
	if !strings.Contains(b.String(), `\x1b]52;c;`) {
		t.Errorf("the escape is not rendered visibly:\n%s", b.String())
	}
}
